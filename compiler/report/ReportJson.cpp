//===- ReportJson.cpp - `dmc report --format json` ------------------------===//
//
// Every field of the DataMovementReport plus derived ones; the schema
// ("dmc-report/1") is documented field by field in docs/report-schema.md.
//
//===----------------------------------------------------------------------===//
#include "compiler/report/Report.h"

#include "compiler/report/ReportFormat.h"
#include "compiler/report/ReportTables.h"

#include "llvm/Support/JSON.h"

#include <cmath>

namespace dmc::report {
namespace {

/// Flop are whole numbers in practice: written as integers when exact, so
/// that tools comparing them need no tolerance.
void flopValue(llvm::json::OStream &j, double flop) {
  if (std::nearbyint(flop) == flop && std::fabs(flop) < 9.0e15)
    j.value(int64_t(flop));
  else
    j.value(flop);
}

/// Percentages and intensities rounded to 4 decimals, to keep the output stable.
double rounded(double v) { return std::round(v * 1e4) / 1e4; }

void writeItem(llvm::json::OStream &j, const WorkItem &w) {
  j.object([&] {
    j.attribute("id", w.id);
    j.attribute("name", w.name);
    j.attribute("class", w.opClass);
    j.attribute("backward", w.backward);
    j.attribute("space", w.space);
    j.attributeBegin("flop");
    flopValue(j, w.flop);
    j.attributeEnd();
    j.attribute("bytes_read", w.bytesRead);
    j.attribute("bytes_written", w.bytesWritten);
    j.attribute("bytes", w.bytes());
    j.attributeObject("bytes_by_type", [&] {
      for (const auto &[type, bytes] : w.bytesByType)
        j.attribute(type, bytes);
    });
    j.attribute("io_lower_bound", w.ioLowerBound);
    j.attribute("intensity", rounded(w.intensity()));
    j.attributeArray("members", [&] {
      for (const Member &m : w.members)
        j.object([&] {
          j.attribute("name", m.name);
          j.attribute("class", m.opClass);
          j.attributeBegin("flop");
          flopValue(j, m.flop);
          j.attributeEnd();
        });
    });
    j.attributeArray("epilogues", [&] {
      for (const std::string &e : w.epilogues)
        j.value(e);
    });
  });
}

void writeGraph(llvm::json::OStream &j, const GraphCost &g, double reduction) {
  KernelCounts k = countKernels(g);
  j.object([&] {
    j.attributeBegin("flop");
    flopValue(j, g.flop);
    j.attributeEnd();
    j.attribute("bytes", g.bytes);
    j.attribute("reduction_percent", rounded(reduction));
    j.attributeObject("kernels", [&] {
      j.attribute("total", int64_t(g.items.size()));
      j.attribute("forward", k.forward);
      j.attribute("backward", k.backward);
      j.attribute("contraction", k.contractions);
      j.attribute("non_contraction", k.nonContractions);
      j.attribute("fused_attention", k.fused);
    });
    j.attributeObject("by_class", [&] {
      for (const std::string &name : classesOf(g)) {
        auto it = g.byClass.find(name);
        ClassTotals c = it == g.byClass.end() ? ClassTotals{} : it->second;
        j.attributeObject(name, [&] {
          j.attribute("count", c.count);
          j.attributeBegin("flop");
          flopValue(j, c.flop);
          j.attributeEnd();
          j.attribute("bytes", c.bytes);
          j.attribute("percent_flop", rounded(percentOf(c.flop, g.flop)));
          j.attribute("percent_bytes", rounded(percentOf(double(c.bytes), double(g.bytes))));
        });
      }
    });
    j.attributeArray("items", [&] {
      for (const WorkItem &w : g.items)
        writeItem(j, w);
    });
    j.attributeArray("edges", [&] {
      for (const Edge &e : g.edges)
        j.object([&] {
          j.attribute("from", e.from);
          j.attribute("to", e.to);
          j.attribute("tensor", e.tensor);
          j.attribute("bytes", e.bytes);
        });
    });
  });
}

} // namespace

void printJson(const DataMovementReport &report, llvm::raw_ostream &os) {
  llvm::json::OStream j(os, /*IndentSize=*/2);
  j.object([&] {
    j.attribute("schema", "dmc-report/1");
    j.attribute("model", report.model);
    j.attribute("stage", report.stage);
    j.attribute("counting", kCountingRule);
    j.attribute("reduction_percent", rounded(report.reductionPercent()));
    if (!report.memory.planned) {
      j.attribute("memory", nullptr);
    } else {
      const MemoryFigures &m = report.memory;
      j.attributeObject("memory", [&] {
        j.attribute("arena_bytes", m.arenaBytes);
        j.attribute("inference_arena_bytes", m.inferenceArenaBytes);
        j.attribute("inference_peak_live_bytes", m.inferencePeakLiveBytes);
        j.attribute("peak_live_bytes", m.peakLiveBytes);
        j.attribute("intermediate_bytes", m.intermediateBytes);
        j.attribute("saved_activation_bytes", m.savedActivationBytes);
        j.attribute("workspace_bytes", m.workspaceBytes);
      });
    }
    if (report.attention.kernels == 0) {
      j.attribute("fused_attention", nullptr);
    } else {
      j.attributeObject("fused_attention", [&] {
        j.attribute("kernels", int64_t(report.attention.kernels));
        j.attribute("unfused_bytes", report.attention.unfusedBytes);
        j.attribute("unfused_arena_bytes", report.attention.unfusedMemory.arenaBytes);
        j.attribute("unfused_saved_activation_bytes",
                    report.attention.unfusedMemory.savedActivationBytes);
      });
    }
    if (!report.layouts.chosen) {
      j.attribute("layouts", nullptr);
    } else {
      const LayoutFigures &l = report.layouts;
      j.attributeObject("layouts", [&] {
        j.attribute("contractions", l.contractions);
        j.attribute("unmappable_before", l.unmappableBefore);
        j.attribute("unmappable_after", l.unmappableAfter);
        j.attributeArray("changed", [&] {
          for (const LayoutChange &c : l.changed)
            j.object([&] {
              j.attribute("tensor", c.tensor);
              j.attribute("producer", c.producer);
              j.attribute("frontend", c.frontend);
              j.attribute("chosen", c.chosen);
              j.attribute("bytes", c.bytes);
            });
        });
        j.attributeArray("transposes", [&] {
          for (const InsertedTranspose &t : l.transposes)
            j.object([&] {
              j.attribute("contraction", t.contraction);
              j.attribute("operand", t.operand);
              j.attribute("tensor", t.tensor);
              j.attribute("dims", t.dims);
              j.attribute("bytes", t.bytes);
            });
        });
        j.attribute("transpose_bytes", l.transposeBytes());
        j.attributeArray("epilogues", [&] {
          for (const EpilogueUse &e : l.epilogues)
            j.object([&] {
              j.attribute("contraction", e.contraction);
              j.attribute("equation", e.equation);
              j.attribute("candidates", e.candidates);
              j.attribute("chosen", e.chosen);
              j.attribute("bytes_saved", e.bytesSaved);
              j.attribute("why_not", e.whyNot);
            });
        });
        j.attribute("epilogue_bytes_saved", l.epilogueBytesSaved());
      });
    }
    j.attributeObject("graphs", [&] {
      j.attributeBegin("unfused");
      writeGraph(j, report.unfused, 0.0);
      j.attributeEnd();
      j.attributeBegin("stacked");
      writeGraph(j, report.stacked, reductionVsUnfused(report, report.stacked));
      j.attributeEnd();
      j.attributeBegin("fused");
      writeGraph(j, report.fused, report.reductionPercent());
      j.attributeEnd();
    });
  });
  os << "\n";
}

} // namespace dmc::report
