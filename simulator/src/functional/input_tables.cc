// Per-thread tables of a unit's output per int16 input (input_tables.h).
#include "input_tables.h"

#include <string_view>

namespace openbpu::simulator::functional {

namespace {

// Bytes of tables (and keys) one thread keeps; past it the cache starts over.
constexpr size_t kCacheBytes = size_t{64} << 20;

struct Entry {
  size_t hash;
  std::vector<uint8_t> key;
  std::vector<uint8_t> table;  // empty: the key was seen once
  size_t bytes() const { return key.size() + table.size(); }
};

struct Cache {
  std::vector<Entry> entries;
  size_t bytes = 0;
};

size_t hash_of(const std::vector<uint8_t>& key) {
  return std::hash<std::string_view>{}(
      std::string_view(reinterpret_cast<const char*>(key.data()), key.size()));
}

}  // namespace

const uint8_t* int16_input_table(const std::vector<uint8_t>& key, size_t entry_bytes,
                                 bool build_now, const std::function<void(uint8_t*)>& build) {
  thread_local Cache cache;
  const size_t hash = hash_of(key);
  Entry* entry = nullptr;
  for (Entry& e : cache.entries) {
    if (e.hash == hash && e.key == key) entry = &e;
  }
  if (entry == nullptr) {
    if (cache.bytes + key.size() > kCacheBytes) {
      cache.entries.clear();
      cache.bytes = 0;
    }
    cache.entries.push_back(Entry{hash, key, {}});
    cache.bytes += key.size();
    if (!build_now) return nullptr;
    entry = &cache.entries.back();
  }
  if (entry->table.empty()) {
    const size_t bytes = kInt16Inputs * entry_bytes + 4;
    if (cache.bytes + bytes > kCacheBytes) {  // keep only this key
      Entry kept = std::move(*entry);
      cache.entries.clear();
      cache.entries.push_back(std::move(kept));
      cache.bytes = cache.entries.back().bytes();
      entry = &cache.entries.back();
    }
    entry->table.assign(bytes, 0);
    build(entry->table.data());
    cache.bytes += bytes;
  }
  return entry->table.data();
}

}  // namespace openbpu::simulator::functional
