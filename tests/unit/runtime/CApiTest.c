/*===- CApiTest.c - runtime/dmrt.h compiled as C --------------------------===
 *
 * A C99 program: the header must compile as C, and the library's errors
 * must reach C callers (status and message). Exit 0 on success.
 *===----------------------------------------------------------------------===*/
#include "runtime/dmrt.h"

#include <stdio.h>
#include <string.h>

static int failures = 0;

static void expect(int cond, const char *what) {
  if (!cond) {
    printf("FAIL: %s (last error: %s)\n", what, dmrt_last_error());
    ++failures;
  }
}

int main(void) {
  dmrt_layer *layer = NULL;
  dmrt_open_options o;
  dmrt_status s;
  dmrt_open_options_init(&o);
  o.flags = DMRT_OPEN_VALIDATE_ONLY;
  s = dmrt_open("/nonexistent/bundle.dmlib", &o, &layer);
  expect(s == DMRT_ERROR_BUNDLE, "a missing bundle is DMRT_ERROR_BUNDLE");
  expect(strstr(dmrt_last_error(), "/nonexistent/bundle.dmlib") != NULL,
         "the message names the bundle");
  expect(layer == NULL, "no handle on failure");
  expect(strcmp(dmrt_status_name(s), "DMRT_ERROR_BUNDLE") == 0, "status names");
  expect(dmrt_set_seed(NULL, 1, 0) == DMRT_ERROR_INVALID_ARGUMENT, "null handle");
  expect(dmrt_dropout_key(5, 0) == 5, "offset 0 is the seed");
  expect(dmrt_api_version() == DMRT_API_VERSION, "api version");
  dmrt_close(NULL);
  if (failures == 0)
    printf("dmrt.h from C: ok\n");
  return failures ? 1 : 0;
}
