// The per-device tuned tables of the `auto` tier (auto_table.h).
#include "auto_table.h"

#include <cctype>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
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

}  // namespace

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
    std::ifstream in(path);
    if (!in) continue;
    std::stringstream text;
    text << in.rdbuf();
    try {
      slot.table = std::make_shared<const AutoTable>(AutoTable::parse(text.str()));
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
