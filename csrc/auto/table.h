// The tuned tables of the `auto` tier (auto/plan.h's AutoTable) for the GPUs of this process:
// one per device, loaded on the device's first `auto` call from the first directory that has
// a file for its GPU (gemmtiles sets the directories at import: the user's cache, then the
// tables shipped in the package), or set explicitly (gemmtiles.tune). Thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "plan.h"

namespace gemmtiles {

// The file name of a GPU's table: its name with every character but letters and digits
// replaced by '_', plus ".txt" ("NVIDIA H100 80GB HBM3" -> "NVIDIA_H100_80GB_HBM3.txt").
std::string auto_table_file(const std::string& gpu_name);

void set_auto_table_dirs(std::vector<std::string> dirs);

// The table of `device` (a GPU named gpu_name), loaded on first use; an empty table when no
// directory has one. A file that does not parse raises (naming it) on every call until fixed.
std::shared_ptr<const AutoTable> auto_table_for(int device, const std::string& gpu_name);

// Replaces the table of `device` (nullptr: forget it, so that the next call loads it from the
// directories again); `source` is what auto_table_source reports.
void set_auto_table(int device, std::shared_ptr<const AutoTable> table, std::string source);

// Where the table of `device` came from: a path, what set_auto_table named, "" when no
// directory had one, or "not loaded" before the device's first auto call.
std::string auto_table_source(int device);

}  // namespace gemmtiles
