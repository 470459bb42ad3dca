// The per-device tuned tables of the `auto` tier (auto/table.h).
#include "table.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>

namespace gemmtiles {
namespace {

struct Slot {
  std::shared_ptr<const AutoTable> table;
  std::string source;
};

std::mutex& mu() {
  static std::mutex m;
  return m;
}
std::vector<std::string>& dirs() {
  static std::vector<std::string> d;
  return d;
}
std::map<int, Slot>& slots() {
  static std::map<int, Slot> s;
  return s;
}

// A whole decimal integer (digits only, at most 15 of them).
bool parse_int(const std::string& s, int64_t& out) {
  if (s.empty() || s.size() > 15) return false;
  out = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return false;
    out = out * 10 + (ch - '0');
  }
  return true;
}

// A positive finite decimal number (strtod in the "C" locale's format: digits, '.', an exponent).
bool parse_positive(const std::string& s, double& out) {
  if (s.empty() || s.size() > 32) return false;
  for (char ch : s)
    if (!(std::isdigit(static_cast<unsigned char>(ch)) || ch == '.' || ch == 'e' || ch == 'E' || ch == '-' ||
          ch == '+'))
      return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(out) && out > 0;
}

}  // namespace

// Plain string scanning: no iostreams, whose locale machinery a table does not need.
AutoTable AutoTable::parse(const std::string& text) {
  AutoTable t;
  size_t pos = 0;
  for (int no = 1; pos <= text.size(); ++no) {
    const size_t eol = std::min(text.find('\n', pos), text.size());
    std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    line = line.substr(0, line.find('#'));
    std::vector<std::string> f;
    for (size_t i = 0; i < line.size();) {
      while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
      size_t j = i;
      while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
      if (j > i) f.push_back(line.substr(i, j - i));
      i = j;
    }
    if (f.empty()) continue;  // blank or comment
    if (f[0] == "model" && f.size() > 1 && f[1] == "exact") {
      // 'model exact <layout> <p...>': this GPU's fit of the exact-kernel model (plan.h,
      // exact_model_params' order), every parameter >= 0, fitted to the features named by
      // kExactModelLayout (exact_model.h). A line of other features would be read with
      // another meaning: refused, naming the refit.
      if (f.size() > 2 && f[2] != kExactModelLayout) {
        throw std::invalid_argument("line " + std::to_string(no) + ": a 'model exact' line of another feature " +
                                    "layout than '" + kExactModelLayout + "' (of an earlier gemmtiles?): " +
                                    "refit it with python -m gemmtiles.tune --fit-exact, got '" + line + "'");
      }
      std::array<double, kExactModelSize> p{};
      bool ok = f.size() == 3 + p.size() && !t.exact_model;
      for (size_t i = 0; ok && i < p.size(); ++i) ok = f[3 + i] == "0" || parse_positive(f[3 + i], p[i]);
      if (!ok) {
        throw std::invalid_argument("line " + std::to_string(no) + ": expected one 'model exact " +
                                    kExactModelLayout + "' line of " + std::to_string(p.size()) +
                                    " numbers >= 0, got '" + line + "'");
      }
      t.exact_model = exact_model_of(p);
      continue;
    }
    if (f[0] == "model") {
      TensorCoreModel m{};
      const bool ok = f.size() == 8 && f[1] == "tensor_cores" && parse_positive(f[2], m.launch_us) &&
                      parse_positive(f[3], m.tf32x3_launch_us) && parse_positive(f[4], m.wave_k_us) &&
                      parse_positive(f[5], m.bytes_per_us) && parse_positive(f[6], m.exact_launch_us) &&
                      parse_positive(f[7], m.exact_flops_per_us);
      if (!ok || t.tensor_core_model) {
        throw std::invalid_argument("line " + std::to_string(no) + ": expected one 'model tensor_cores " +
                                    "<launch_us> <tf32x3_launch_us> <wave_k_us> <bytes_per_us> " +
                                    "<exact_launch_us> <exact_flops_per_us>' (positive numbers), got '" + line +
                                    "'");
      }
      m.floor_bytes_per_us = kTensorCoreModel.floor_bytes_per_us;  // the GPU's: tensor_core_model_for
      t.tensor_core_model = m;
      continue;
    }
    AutoTableEntry e{};
    int64_t rows = 0;
    const bool a_col = f.size() == 7 && (f[0] == "TN" || f[0] == "TT");
    const bool ok = f.size() == 7 && (f[0] == "NN" || f[0] == "NT" || a_col) && parse_int(f[1], e.m) &&
                    parse_int(f[2], e.n) && parse_int(f[3], e.k) && parse_int(f[5], rows) &&
                    parse_int(f[6], e.splits) && e.m > 0 && e.n > 0 && e.k > 0 && e.splits >= 1 &&
                    e.splits <= kMaxTableSplits;
    const bool pipelined = ok && f[4] == "pipelined" && rows == 128;
    const bool tile = pipelined || (ok && f[4] == "split_tile" && (rows == 32 || rows == 64 || rows == 128));
    const bool transposed = ok && f[4] == "transposed" && f[0] == "NN" && rows == 0 && e.splits == 1;
    const bool cutlass = ok && f[4] == "cutlass" && rows == 0 && e.splits == 1;
    const bool streamk = ok && f[4] == "streamk" && f[0] == "NT" && rows == 0 && e.splits == 1;
    // skinny: the columns of B a block takes (skinny_cols in auto/plan.h), 0 for the usual.
    const bool skinny = ok && f[4] == "skinny" && (rows == 0 || rows == 32 || rows == 64 || rows == 128);
    // gemv: the columns of B a block takes (a width of kGemvBuilds), float4s where B's lines
    // allow them; a width the build for the problem's rows lacks leaves the entry unused.
    const bool gemv = ok && f[4] == "gemv" && f[0] == "NT" && e.splits == 1 && gemv_width(rows);
    if (!ok || (a_col && !cutlass) ||
        !(tile || transposed || cutlass || streamk || skinny || gemv || f[4] == "warptile")) {
      throw std::invalid_argument("line " + std::to_string(no) + ": expected '<NN|NT> m n k " +
                                  "<split_tile|pipelined|warptile> rows splits', '<NN|NT> m n k skinny " +
                                  "<0|32|64|128> splits', 'NT m n k gemv <2|4|8> 1', 'NN m n k " +
                                  "transposed 0 1', '<NN|NT|TN|TT> m n k cutlass 0 1' or 'NT m n k " +
                                  "streamk 0 1', got '" + line + "'");
    }
    e.a_kmajor = !a_col;
    e.b_kmajor = f[0][1] == 'T';
    e.rows = static_cast<int>(rows);
    e.pipelined = pipelined;
    e.transposed = transposed;
    e.kernel = tile      ? AutoKernel::kSplitTile
               : cutlass ? AutoKernel::kCutlass
               : streamk ? AutoKernel::kCutlassStreamK
               : skinny  ? AutoKernel::kSkinnyNMajor
               : gemv    ? AutoKernel::kGemv
                                  : AutoKernel::kWarptile;
    t.entries.push_back(e);
  }
  return t;
}

std::string auto_table_file(const std::string& gpu_name) {
  std::string f = gpu_name;
  for (char& ch : f)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return f + ".txt";
}

void set_auto_table_dirs(std::vector<std::string> d) {
  std::lock_guard<std::mutex> lock(mu());
  dirs() = std::move(d);
}

std::shared_ptr<const AutoTable> auto_table_for(int device, const std::string& gpu_name) {
  std::lock_guard<std::mutex> lock(mu());
  auto it = slots().find(device);
  if (it != slots().end()) return it->second.table;
  Slot slot{std::make_shared<const AutoTable>(), ""};
  for (const std::string& dir : dirs()) {
    const std::string path = dir + "/" + auto_table_file(gpu_name);
    std::FILE* in = std::fopen(path.c_str(), "rb");
    if (!in) continue;
    std::string text;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, in)) > 0;) text.append(buf, n);
    std::fclose(in);
    try {
      slot.table = std::make_shared<const AutoTable>(AutoTable::parse(text));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("gemmtiles::auto: the tuned table " + path + " does not parse: " +
                                  e.what() + " (rerun python -m gemmtiles.tune, or delete it)");
    }
    slot.source = path;
    break;
  }
  return slots().emplace(device, std::move(slot)).first->second.table;
}

void set_auto_table(int device, std::shared_ptr<const AutoTable> table, std::string source) {
  std::lock_guard<std::mutex> lock(mu());
  if (table) {
    slots()[device] = Slot{std::move(table), std::move(source)};
  } else {
    slots().erase(device);
  }
}

std::string auto_table_source(int device) {
  std::lock_guard<std::mutex> lock(mu());
  auto it = slots().find(device);
  return it == slots().end() ? "not loaded" : it->second.source;
}

}  // namespace gemmtiles
