//===- DatabaseKnobs.cpp - dmc compile --db: knobs from measurements ------===//
#include "compiler/bundle/DatabaseKnobs.h"

#include "compiler/bundle/DatabaseSelection.h"

#include "runtime/format/Manifest.h"
#include "tuning-db/Database.h"
#include "tuning-db/KnobSelection.h"

#include "llvm/Support/MemoryBuffer.h"

namespace dmc::bundle {
namespace {

llvm::Error fail(const std::string &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Error readText(const std::string &path, std::string &text) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return fail(path + ": cannot read: " + buffer.getError().message());
  text = (*buffer)->getBuffer().str();
  return llvm::Error::success();
}

} // namespace

llvm::Error knobsFromDatabase(const std::string &defaultBundle, const std::string &dbPath,
                              const std::string &device, dmrt::Configuration &config,
                              bool &changed, llvm::raw_ostream &log) {
  std::string manifestPath = defaultBundle + "/manifest.json";
  std::string configPath = defaultBundle + "/config.json";
  std::string manifestText, configText, error;
  if (llvm::Error e = readText(manifestPath, manifestText))
    return e;
  if (llvm::Error e = readText(configPath, configText))
    return e;
  dmrt::Manifest manifest;
  if (!dmrt::parseManifest(manifestText, manifestPath, manifest, error) ||
      !dmrt::parseConfig(configText, configPath, config, error))
    return fail(error);
  tuningdb::Database db;
  std::vector<std::string> warnings;
  bool loaded = db.load(dbPath, /*missingIsEmpty=*/false, error, warnings);
  for (const std::string &w : warnings)
    log << "dmc compile: warning: " << w << "\n";
  if (!loaded)
    return fail(error);
  tuningdb::Device chosen;
  if (!tuningdb::chooseDevice(db.records(), device, chosen, error))
    return fail(dbPath + ": " + error);
  tuningdb::Software software;
  software.nvrtc = manifest.nvrtc;
  software.codegen = tuningdb::kCodegenVersion;
  // Per kernel in its default layouts (the table), then the global choice.
  dmrt::Configuration perKernel = config;
  tuningdb::KnobSelection sel =
      tuningdb::selectKnobs(manifest, perKernel, db.records(), chosen, software);
  GlobalSelection global = selectGlobally(manifest, config, sel.match.matched);
  log << "dmc compile: " << dbPath << " for " << chosen.name << " (" << chosen.cc
      << "), NVRTC " << software.nvrtc << ", codegen " << software.codegen << "\n"
      << sel.describe() << global.describe();
  changed = global.ok && (global.kernelsChanged || global.layoutsChanged);
  return llvm::Error::success();
}

} // namespace dmc::bundle
