//===- KnobSelection.cpp - Measured knobs for a bundle's kernels ----------===//
#include "tuning-db/KnobSelection.h"

#include "runtime/format/GemmAlgoConfig.h"
#include "tuning-db/Problem.h"

#include <cstdio>
#include <set>

namespace dmc::tuningdb {
bool knobsEqual(const Record &r, const dmrt::ConfigKernel &k) {
  return r.knobs == recordKnobs(k);
}

namespace {

std::string fmtUs(double us) {
  if (us < 0)
    return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", us);
  return buf;
}

} // namespace

bool chooseDevice(const std::vector<Record> &records, const std::string &requested, Device &out,
                  std::string &error) {
  std::vector<Device> devices;
  std::set<std::string> names;
  for (const Record &r : records)
    if (!r.rejected && names.insert(r.device.name + "\n" + r.device.cc).second)
      devices.push_back(r.device);
  std::string list;
  for (const Device &d : devices)
    list += (list.empty() ? "" : ", ") + ("\"" + d.name + "\" (" + d.cc + ")");
  if (devices.empty()) {
    error = "the database has no usable record (none, or every one rejected by the tuner)";
    return false;
  }
  for (const Device &d : devices)
    if (requested.empty() ? devices.size() == 1 : d.name == requested) {
      out = d;
      return true;
    }
  error = requested.empty()
              ? "the database has records of several devices: " + list +
                    "; say which with --db-device NAME"
              : "no record of device \"" + requested + "\"; the database has " + list;
  return false;
}

KnobSelection selectKnobs(const dmrt::Manifest &m, const dmrt::Configuration &config,
                          const std::vector<Record> &records, const Device &device,
                          const Software &software) {
  KnobSelection sel;
  sel.match = match(records, device, software, /*libraries=*/false);
  for (const dmrt::ConfigKernel &ck : config.kernels) {
    const dmrt::BundleKernel *k = m.kernelByName(ck.name);
    if (!k)
      continue; // an inserted transpose's kernel is in the manifest too; never absent
    Problem p = kernelProblem(m, *k);
    KernelChoice choice;
    choice.kernel = ck.name;
    const Record *best = nullptr;
    for (const Record *r : sel.match.matched) {
      dmrt::ConfigKernel knobs;
      if (!sameProblem(p, *r) || !configKnobs(*r, knobs))
        continue;
      ++choice.candidates;
      choice.candidateUs.push_back(r->medianUs);
      choice.candidateKnobs.push_back(knobs);
      if (knobsEqual(*r, ck) && (choice.defaultUs < 0 || r->medianUs < choice.defaultUs))
        choice.defaultUs = r->medianUs;
      if (!best || r->medianUs < best->medianUs)
        best = r;
    }
    if (best) {
      choice.chosenUs = best->medianUs;
      choice.chosen = describeCandidate(*best);
      choice.changed = !knobsEqual(*best, ck);
      if (choice.defaultUs > 0) {
        sel.defaultSumUs += choice.defaultUs;
        sel.chosenSumUs += choice.chosenUs;
        ++sel.comparable;
      }
    }
    sel.kernels.push_back(choice);
  }
  return sel;
}

void selectAlgorithms(const dmrt::Manifest &m, dmrt::Configuration &config,
                      KnobSelection &sel) {
  sel.contractions.clear();
  sel.contractionDefaultSumUs = sel.contractionChosenSumUs = 0;
  sel.contractionsComparable = 0;
  for (size_t n = 0; n < config.contractions.size() && n < m.contractions.size(); ++n) {
    dmrt::ConfigContraction &cc = config.contractions[n];
    const dmrt::BundleContraction &bc = m.contractions[n];
    ContractionChoice choice;
    choice.contraction = cc.name;
    choice.equation = bc.equation;
    if (!bc.mappable) {
      sel.contractions.push_back(choice);
      continue;
    }
    Problem p = contractionProblem(m, bc);
    const Record *best = nullptr;
    for (const Record *r : sel.match.matched) {
      if (r->kind != Kind::Contraction || !sameProblem(p, *r))
        continue;
      ++choice.candidates;
      choice.candidateUs.push_back(r->medianUs);
      auto rank = r->knobs.find("heuristic_rank");
      bool isDefault = r->algorithm == dmrt::kHeuristicAlgorithm ||
                       (rank != r->knobs.end() && rank->second == Knob(int64_t(0)));
      if (isDefault && (choice.defaultUs < 0 || r->medianUs < choice.defaultUs))
        choice.defaultUs = r->medianUs;
      if (!best || r->medianUs < best->medianUs)
        best = r;
    }
    if (best) {
      bool gains = choice.defaultUs < 0 ||
                   best->medianUs < choice.defaultUs * (1.0 - kAlgorithmMinGain);
      const std::string &algo =
          gains ? best->algorithm : std::string(dmrt::kHeuristicAlgorithm);
      choice.chosenUs = gains ? best->medianUs : choice.defaultUs;
      choice.chosen = algo;
      choice.changed = algo != cc.algorithm;
      cc.algorithm = algo;
      if (choice.defaultUs > 0) {
        sel.contractionDefaultSumUs += choice.defaultUs;
        sel.contractionChosenSumUs += choice.chosenUs;
        ++sel.contractionsComparable;
      }
    }
    sel.contractions.push_back(choice);
  }
}

namespace {

/// One line per choice ("  NAME: N candidate(s); default .. us, chosen .. us
/// <- what"), then the totals, for kernels and contractions alike.
template <class Choice, class NameOf>
std::string describeChoices(const std::vector<Choice> &choices, NameOf nameOf, const char *unit,
                            const char *noRecords, const char *noun, double chosenSumUs,
                            double defaultSumUs, int comparable) {
  std::string s;
  int measured = 0, changed = 0;
  for (const Choice &c : choices) {
    measured += c.chosenUs >= 0;
    changed += c.changed;
    s += "  " + nameOf(c) + ": ";
    if (c.chosenUs < 0) {
      s += std::string("no records (") + noRecords + ")\n";
      continue;
    }
    s += std::to_string(c.candidates) + " " + unit + "; default " + fmtUs(c.defaultUs) +
         " us, chosen " + fmtUs(c.chosenUs) + " us" + (c.changed ? " <- " + c.chosen : "") +
         "\n";
  }
  s += std::to_string(measured) + " of " + std::to_string(choices.size()) + " " + noun +
       "(s) measured, " + std::to_string(changed) + " changed";
  if (comparable)
    s += std::string("; predicted ") + noun + " time " + fmtUs(chosenSumUs) +
         " us against the default's " + fmtUs(defaultSumUs) + " us over the " +
         std::to_string(comparable) + " " + noun + "(s) measured both ways";
  return s + "\n";
}

} // namespace

std::string KnobSelection::describe() const {
  std::string s = "database: " + match.summary() + "\n";
  s += describeChoices(
      kernels, [](const KernelChoice &c) { return c.kernel; }, "candidate(s)", "default knobs",
      "kernel", chosenSumUs, defaultSumUs, comparable);
  if (!contractions.empty())
    s += describeChoices(
        contractions,
        [](const ContractionChoice &c) { return c.contraction + " (" + c.equation + ")"; },
        "algorithm(s)", "the heuristic's algorithm", "contraction", contractionChosenSumUs,
        contractionDefaultSumUs, contractionsComparable);
  return s;
}

} // namespace dmc::tuningdb
