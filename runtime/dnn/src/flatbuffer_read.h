// Reading optional fields of a verified model file: an absent string or vector reads as empty.
#pragma once

#include <string>
#include <vector>

#include <flatbuffers/flatbuffers.h>

namespace openbpu::dnn {

inline std::string str(const flatbuffers::String* s) { return s == nullptr ? std::string() : s->str(); }

template <typename T>
std::vector<T> vec(const flatbuffers::Vector<T>* v) {
  return v == nullptr ? std::vector<T>() : std::vector<T>(v->begin(), v->end());
}

}  // namespace openbpu::dnn
