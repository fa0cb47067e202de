/*===- dmrt.h - The dmc runtime's C API -------------------------------------===
 *
 * Run a layer compiled by `dmc compile` (a bundle, OUT.dmlib) on a CUDA
 * stream: open it, bind device buffers to its tensors, run forward and
 * backward. docs/runtime-api.md documents every function, the tensor
 * conventions and how layer instances share arenas. Pure C (C99); no CUDA
 * header needed (a stream is a `struct CUstream_st *`, i.e. cudaStream_t).
 *
 * Every function that can fail returns a dmrt_status; on failure
 * dmrt_last_error() (per thread) says what went wrong, naming the file,
 * tensor, contraction or step. No function aborts or throws.
 *
 *===----------------------------------------------------------------------===*/
#ifndef DMRT_H
#define DMRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DMRT_API_VERSION 4 /* 2: DMRT_OPEN_INFERENCE_ONLY, dmrt_arena_bytes; 3: DMRT_GRAPHS_SERIAL;
                              4: DMRT_OPEN_GRAPH_MEMSETS */
#define DMRT_MAX_RANK 8

typedef struct dmrt_layer dmrt_layer;
typedef struct CUstream_st *dmrt_stream; /* == cudaStream_t; NULL: the default stream */

typedef enum dmrt_status {
  DMRT_OK = 0,
  DMRT_ERROR_INVALID_ARGUMENT = 1, /* null handle or out-pointer, bad index, bad option */
  DMRT_ERROR_BUNDLE = 2,    /* missing/unreadable/corrupt manifest or cubin, bad checksum */
  DMRT_ERROR_UNSUPPORTED = 3, /* valid bundle this runtime cannot run (no memory plan,
                                 a contraction without a cuBLASLt form) */
  DMRT_ERROR_NO_DEVICE = 4, /* no GPU or no NVIDIA driver */
  DMRT_ERROR_ARCH = 5,      /* the bundle's arch does not run on this device */
  DMRT_ERROR_CUDA = 6,      /* a CUDA, driver or cuBLASLt call failed */
  DMRT_ERROR_BINDING = 7,   /* unknown tensor, wrong dtype/shape/size, null or
                               misaligned pointer, not device memory */
  DMRT_ERROR_UNBOUND = 8,   /* a tensor the phase needs is not bound */
  DMRT_ERROR_STATE = 9,     /* backward before a training forward; no device
                               (validate-only handle); no arena, or one too small
                               for a training run; training on an inference-only
                               layer */
  DMRT_ERROR_INTERNAL = 10  /* a bug: please report the message */
} dmrt_status;

typedef enum dmrt_dtype {
  DMRT_DTYPE_F32 = 0, DMRT_DTYPE_F16 = 1, DMRT_DTYPE_BF16 = 2, DMRT_DTYPE_I32 = 3
} dmrt_dtype;

typedef enum dmrt_role {
  DMRT_ROLE_INPUT = 0, DMRT_ROLE_PARAM = 1, DMRT_ROLE_GRAD_OUTPUT = 2,
  DMRT_ROLE_OUTPUT = 3, DMRT_ROLE_GRAD = 4
} dmrt_role;

typedef enum dmrt_mode {
  DMRT_MODE_TRAIN = 0,    /* forward keeps the saved activations for backward */
  DMRT_MODE_INFERENCE = 1 /* forward only; backward afterwards is an error */
} dmrt_mode;

/* dmrt_open_options.flags */
#define DMRT_OPEN_VALIDATE_ONLY 1u /* check files and manifest; no device call */
#define DMRT_OPEN_NO_GRAPHS 2u     /* plain launches instead of CUDA graphs */
#define DMRT_OPEN_EXTERNAL_ARENA 4u /* allocate no arena; call dmrt_set_arena */
#define DMRT_OPEN_POISON_ARENA 8u   /* fill the arena with 0xFF bytes (NaN in f32, f16
                                       and bf16) before its first step, so that a step
                                       reading arena memory no earlier step wrote yields
                                       NaN (a test mode; costs one memset per arena) */
#define DMRT_OPEN_INFERENCE_ONLY 16u /* only DMRT_MODE_INFERENCE forwards: the owned arena
                                        is the smaller forward-only plan's (training runs
                                        are DMRT_ERROR_STATE) */
#define DMRT_OPEN_SERIAL_GRAPHS 32u /* captured graphs chain the steps in the bundle's
                                       order (DMRT_GRAPHS_SERIAL) */
#define DMRT_OPEN_GRAPH_MEMSETS 64u /* keep the memset nodes cuBLASLt adds to a captured
                                       graph; by default each becomes a fill kernel of
                                       the runtime's (the same bytes written, without
                                       the idle time a memset node costs its neighbours) */

/* dmrt_set_graphs modes. With graphs on, a captured phase orders its steps
   only where they share memory (one writing), so independent steps may run
   side by side; SERIAL chains them in the bundle's order, as plain launches
   run them. Both give the same results. */
#define DMRT_GRAPHS_OFF 0
#define DMRT_GRAPHS_ON 1
#define DMRT_GRAPHS_SERIAL 2

typedef struct dmrt_open_options {
  uint32_t struct_size; /* sizeof(dmrt_open_options) */
  int32_t device;       /* CUDA device ordinal (default 0) */
  uint32_t flags;       /* DMRT_OPEN_* (default 0) */
} dmrt_open_options;

/* A tensor the caller provides (argument) or receives (result). */
typedef struct dmrt_tensor_desc {
  const char *name;  /* valid while the layer is open */
  dmrt_role role;
  const char *dims;  /* dimension letters, outermost first (row-major) */
  int32_t rank;
  int64_t shape[DMRT_MAX_RANK];
  dmrt_dtype dtype;
  int64_t bytes;
  /* Tensors with the same buffer index are slices of one caller allocation
     (stacked parameters): this one starts buffer_offset bytes into it, which
     is buffer_bytes long. Most tensors are a whole buffer of their own. */
  int32_t buffer;
  int64_t buffer_offset;
  int64_t buffer_bytes;
} dmrt_tensor_desc;

typedef struct dmrt_memory_info {
  int64_t arena_bytes;            /* the arena every run the layer allows needs: the
                                     training plan's, the inference plan's with
                                     DMRT_OPEN_INFERENCE_ONLY (dmrt_arena_bytes: per mode) */
  int64_t kernel_workspace_bytes; /* of which kernel workspaces */
  int64_t gemm_workspace_bytes;   /* cuBLASLt workspace, allocated by the runtime */
  int64_t caller_bytes;           /* all caller buffers together */
  int32_t external_arena;         /* 1: the caller provides the arena */
} dmrt_memory_info;

/* ---- errors ---- */
const char *dmrt_last_error(void);           /* this thread's last failure ("" if none) */
const char *dmrt_status_name(dmrt_status s); /* "DMRT_ERROR_BINDING", ... */
int dmrt_api_version(void);                  /* DMRT_API_VERSION of the library */

/* ---- open / close ---- */
void dmrt_open_options_init(dmrt_open_options *options);
dmrt_status dmrt_open(const char *bundle_dir, const dmrt_open_options *options,
                      dmrt_layer **out);
void dmrt_close(dmrt_layer *layer); /* NULL is fine; waits for the device first */

/* ---- what the layer is ---- */
const char *dmrt_model(const dmrt_layer *layer);
const char *dmrt_device_name(const dmrt_layer *layer); /* "" when validate-only */
dmrt_status dmrt_tensor_count(const dmrt_layer *layer, int32_t *count);
dmrt_status dmrt_tensor_info(const dmrt_layer *layer, int32_t index, dmrt_tensor_desc *out);
dmrt_status dmrt_find_tensor(const dmrt_layer *layer, const char *name, int32_t *index);
dmrt_status dmrt_memory(const dmrt_layer *layer, dmrt_memory_info *out);
/* The arena a run of `mode` needs: DMRT_MODE_TRAIN the training plan's,
   DMRT_MODE_INFERENCE the forward-only plan's (smaller: saved activations die
   at their last forward use; the training plan's for bundles before manifest
   version 5). Works on validate-only handles. */
dmrt_status dmrt_arena_bytes(const dmrt_layer *layer, dmrt_mode mode, int64_t *bytes);

/* ---- memory ---- */
dmrt_status dmrt_bind(dmrt_layer *layer, const char *name, void *device_ptr, int64_t bytes,
                      dmrt_dtype dtype, int32_t rank, const int64_t *shape);
dmrt_status dmrt_unbind(dmrt_layer *layer, const char *name);
dmrt_status dmrt_set_arena(dmrt_layer *layer, void *device_ptr, int64_t bytes);

/* ---- running ---- */
uint64_t dmrt_dropout_key(uint64_t seed, uint64_t offset);
dmrt_status dmrt_set_seed(dmrt_layer *layer, uint64_t seed, uint64_t offset);
dmrt_status dmrt_set_graphs(dmrt_layer *layer, int mode); /* DMRT_GRAPHS_* */
dmrt_status dmrt_forward(dmrt_layer *layer, dmrt_stream stream, dmrt_mode mode);
dmrt_status dmrt_backward(dmrt_layer *layer, dmrt_stream stream);

/* ---- profiling ---- */
/* The steps of forward (backward = 0) or backward (1): how many, and each
   one's name ("kernel 3 (softmax)", "contraction 0 (bji,shpi->sbjhp)"). */
dmrt_status dmrt_step_count(const dmrt_layer *layer, int32_t backward, int32_t *count);
const char *dmrt_step_name(const dmrt_layer *layer, int32_t backward, int32_t index);
/* Runs forward (as DMRT_MODE_TRAIN) or backward like dmrt_forward /
   dmrt_backward, but one step at a time between CUDA events, plain
   launches, and waits: ms[i] is step i's time (capacity >= the step count). */
dmrt_status dmrt_profile(dmrt_layer *layer, dmrt_stream stream, int32_t backward, float *ms,
                         int32_t capacity);

#ifdef __cplusplus
}
#endif

#endif /* DMRT_H */
