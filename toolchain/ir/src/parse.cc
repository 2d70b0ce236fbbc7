#include "openbpu/ir/parse.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "openbpu/common/error.h"
#include "openbpu/kernels/dispatch.h"
#include "openbpu/kernels/registry.h"

namespace openbpu::ir {

namespace {

using kernels::AttributeValue;
using kernels::AttrKind;

// splitmix64 over a hash of the name: the same pseudo-random values on every platform.
class NameSeededSequence {
 public:
  explicit NameSeededSequence(std::string_view name) {
    state_ = 1469598103934665603ull;
    for (char c : name) state_ = (state_ ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  }
  double next_unit() {  // [0, 1)
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53;
  }

 private:
  uint64_t state_;
};

Tensor tensor_from_doubles(DataType dtype, const kernels::Shape& shape,
                           const std::vector<double>& values) {
  Tensor t(dtype, shape);
  kernels::dispatch<kernels::AllTypes>(dtype, "a constant", [&]<typename T>() {
    T* out = t.data<T>();
    for (size_t i = 0; i < values.size(); ++i) {
      if constexpr (std::is_same_v<T, bool>) {
        out[i] = values[i] != 0;
      } else {
        out[i] = kernels::from_compute<T>(static_cast<kernels::ComputeType<T>>(values[i]));
      }
    }
  });
  return t;
}

DataType dtype_from_name(std::string_view name) {
  for (int32_t code = 1; code <= 16; ++code) {
    if (kernels::dtype_is_known(code) && kernels::dtype_name(static_cast<DataType>(code)) == name) {
      return static_cast<DataType>(code);
    }
  }
  return DataType::kUndefined;
}

bool is_name_char(char c) {
  return c != '\0' && !std::isspace(static_cast<unsigned char>(c)) && c != ',' && c != '(' &&
         c != ')' && c != '=' && c != '{' && c != '}' && c != '[' && c != ']';
}

class LineParser {
 public:
  LineParser(std::string_view text, int line_no) : s_(text), line_(line_no) {}

  [[noreturn]] void error(const std::string& what) const {
    raise("graph text line ", line_, ": ", what, " at column ", pos_ + 1, " in '", s_, "'");
  }
  void skip_ws() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool at_end() {
    skip_ws();
    return pos_ >= s_.size();
  }
  char peek() {
    skip_ws();
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  bool eat(std::string_view token) {
    skip_ws();
    if (s_.substr(pos_, token.size()) == token) {
      pos_ += token.size();
      return true;
    }
    return false;
  }
  void expect(std::string_view token) {
    if (!eat(token)) error(str_cat("expected '", token, "'"));
  }
  std::string_view rest() const { return s_.substr(pos_); }

  // A bare word: letters, digits, '_', '.', '-', '+' ...
  std::string word() {
    skip_ws();
    const size_t start = pos_;
    while (pos_ < s_.size() && is_name_char(s_[pos_]) && s_[pos_] != ':') ++pos_;
    if (start == pos_) error("expected a word");
    return std::string(s_.substr(start, pos_ - start));
  }

  // "%name" → "name". A ':' belongs to the name unless a space or the end follows it
  // (": type"), so "onnx::Conv_1" stays one name.
  std::string value_name() {
    expect("%");
    const size_t start = pos_;
    while (pos_ < s_.size() && is_name_char(s_[pos_])) {
      if (s_[pos_] == ':' && (pos_ + 1 >= s_.size() || s_[pos_ + 1] == ' ')) break;
      ++pos_;
    }
    if (start == pos_) error("expected a value name after '%'");
    return std::string(s_.substr(start, pos_ - start));
  }

  // A number as written; `is_float` tells whether it was spelled as one.
  double number(bool* is_float) {
    skip_ws();
    const char* begin = s_.data() + pos_;
    const size_t limit = s_.size() - pos_;
    size_t len = 0;
    while (len < limit && (std::isalnum(static_cast<unsigned char>(begin[len])) ||
                           begin[len] == '.' || begin[len] == '-' || begin[len] == '+')) {
      ++len;
    }
    const std::string token(begin, len);
    char* end = nullptr;
    const double v = std::strtod(token.c_str(), &end);
    if (token.empty() || end != token.c_str() + token.size()) error("expected a number");
    pos_ += len;
    if (is_float) {
      *is_float = token.find_first_of(".eEnN") != std::string::npos;  // 1e-05, nan, inf
    }
    return v;
  }

  std::vector<Dim> dims() {
    expect("[");
    std::vector<Dim> out;
    if (eat("]")) return out;
    do {
      skip_ws();
      if (eat("?")) {
        out.push_back(Dim::unknown());
      } else if (std::isdigit(static_cast<unsigned char>(peek()))) {
        out.push_back(Dim::known(static_cast<int64_t>(number(nullptr))));
      } else {
        const size_t start = pos_;
        while (pos_ < s_.size() && s_[pos_] != ',' && s_[pos_] != ']') ++pos_;
        out.push_back(Dim::symbolic(std::string(s_.substr(start, pos_ - start))));
      }
    } while (eat(","));
    expect("]");
    return out;
  }

  TensorType type() {
    skip_ws();
    if (s_.substr(pos_, 1) == "?" && s_.substr(pos_, 2) != "?[") {
      ++pos_;
      return {};
    }
    TensorType t;
    const std::string name = word();
    if (name != "?") {
      t.dtype = dtype_from_name(name);
      if (t.dtype == DataType::kUndefined) error(str_cat("unknown element type '", name, "'"));
    }
    skip_ws();
    if (s_.substr(pos_, 3) == "[*]") {
      pos_ += 3;
      return t;
    }
    t.shape = dims();
    return t;
  }

  // "float32[2,2]{1,2,3,4}", "float32[4]" (pseudo-random), "float32[4] uniform(0.5, 2)".
  Tensor tensor(std::string_view seed_name, bool allow_random) {
    const TensorType t = type();
    const auto shape = t.static_shape();
    if (t.dtype == DataType::kUndefined || !shape) error("a constant needs a type and known dims");
    const int64_t count = kernels::shape_element_count(*shape);
    std::vector<double> values;
    if (eat("{")) {
      if (!eat("}")) {
        do {
          values.push_back(number(nullptr));
        } while (eat(","));
        expect("}");
      }
      if (static_cast<int64_t>(values.size()) != count) {
        error(str_cat("the constant has ", values.size(), " values but its shape holds ", count));
      }
    } else {
      if (!allow_random) error("a tensor attribute needs its values ({...})");
      double lo = -1, hi = 1;
      if (eat("uniform")) {
        expect("(");
        lo = number(nullptr);
        expect(",");
        hi = number(nullptr);
        expect(")");
      } else if (!kernels::dtype_is_float(t.dtype)) {
        lo = -8;
        hi = 8;
      }
      NameSeededSequence sequence(seed_name);
      values.resize(static_cast<size_t>(count));
      for (double& v : values) {
        v = lo + (hi - lo) * sequence.next_unit();
        if (!kernels::dtype_is_float(t.dtype)) v = std::floor(v);
      }
    }
    return tensor_from_doubles(t.dtype, *shape, values);
  }

  std::string quoted() {
    expect("\"");
    const size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != '"') ++pos_;
    if (pos_ >= s_.size()) error("unterminated string");
    std::string out(s_.substr(start, pos_ - start));
    ++pos_;
    return out;
  }

  bool tensor_ahead() {
    skip_ws();
    size_t p = pos_;
    while (p < s_.size() && std::isalnum(static_cast<unsigned char>(s_[p]))) ++p;
    return p > pos_ && std::isalpha(static_cast<unsigned char>(s_[pos_])) && p < s_.size() &&
           s_[p] == '[' && dtype_from_name(s_.substr(pos_, p - pos_)) != DataType::kUndefined;
  }

  // One attribute value; `kind` is the declared kind if known.
  AttributeValue attribute(const AttrKind* kind) {
    const char c = peek();
    if (c == '"') return quoted();
    if (tensor_ahead()) return tensor("", false);
    if (c == '[') {
      expect("[");
      std::vector<double> numbers;
      std::vector<std::string> strings;
      std::vector<Tensor> tensors;
      bool any_float = false;
      if (!eat("]")) {
        do {
          if (peek() == '"') {
            strings.push_back(quoted());
          } else if (tensor_ahead()) {
            tensors.push_back(tensor("", false));
          } else {
            bool f = false;
            numbers.push_back(number(&f));
            any_float = any_float || f;
          }
        } while (eat(","));
        expect("]");
      }
      if (!strings.empty()) return strings;
      if (!tensors.empty()) return tensors;
      const bool as_float = kind ? *kind == AttrKind::kFloats : any_float;
      if (kind && *kind == AttrKind::kStrings) return std::vector<std::string>{};
      if (as_float) return std::vector<float>(numbers.begin(), numbers.end());
      std::vector<int64_t> ints;
      for (double v : numbers) ints.push_back(static_cast<int64_t>(v));
      return ints;
    }
    bool f = false;
    const double v = number(&f);
    const bool as_float = kind ? *kind == AttrKind::kFloat : f;
    if (as_float) return static_cast<float>(v);
    return static_cast<int64_t>(v);
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
  int line_;
};

class GraphTextParser {
 public:
  explicit GraphTextParser(std::string_view text) {
    size_t start = 0;
    while (start <= text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      lines_.push_back(text.substr(start, end - start));
      start = end + 1;
    }
  }

  Model parse() {
    Model model;
    size_t i = next_line(0);
    if (i < lines_.size() && LineParser(lines_[i], 0).eat("model")) {
      parse_model_line(model, i);
      i = next_line(i + 1);
    }
    if (model.opsets.empty()) model.set_opset_version("", 17);
    if (i >= lines_.size()) raise("graph text: no 'graph' line");
    Graph& g = *model.graph;
    LineParser header(lines_[i], static_cast<int>(i + 1));
    header.expect("graph");
    header.skip_ws();
    const std::string_view rest = header.rest();
    const size_t paren = rest.starts_with("(") ? 0 : rest.find(" (");
    if (paren == std::string_view::npos)
      header.error("expected 'graph NAME (inputs) -> (outputs) {'");
    g.set_name(std::string(rest.substr(0, paren)));
    LineParser io(rest.substr(paren), static_cast<int>(i + 1));
    io.expect("(");
    if (!io.eat(")")) {
      do {
        const std::string name = io.value_name();
        io.expect(":");
        Value* v = g.add_value(name, io.type());
        g.add_input(v);
      } while (io.eat(","));
      io.expect(")");
    }
    io.expect("->");
    io.expect("(");
    std::vector<std::string> outputs;
    if (!io.eat(")")) {
      do {
        outputs.push_back(io.value_name());
      } while (io.eat(","));
      io.expect(")");
    }
    io.expect("{");
    bool closed = false;
    for (i = next_line(i + 1); i < lines_.size(); i = next_line(i + 1)) {
      LineParser line(lines_[i], static_cast<int>(i + 1));
      if (line.eat("}")) {
        closed = true;
        break;
      }
      if (line.eat("init ")) {
        parse_init(g, line);
      } else {
        parse_node(model, line);
      }
      if (!line.at_end()) line.error("unexpected text");
    }
    if (!closed) raise("graph text: missing '}' at the end of graph '", g.name(), "'");
    for (const std::string& name : outputs) {
      Value* v = g.find_value(name);
      if (v == nullptr) raise("graph text: graph output '%", name, "' is never defined");
      g.add_output(v);
    }
    return model;
  }

 private:
  size_t next_line(size_t i) const {
    while (i < lines_.size() && LineParser(lines_[i], 0).at_end()) ++i;
    return i;
  }

  void parse_model_line(Model& model, size_t i) {
    LineParser line(lines_[i], static_cast<int>(i + 1));
    line.expect("model");
    while (!line.at_end()) {
      if (line.eat("ir_version=")) {
        model.ir_version = static_cast<int64_t>(line.number(nullptr));
      } else if (line.eat("opsets=[")) {
        if (!line.eat("]")) {
          do {
            const std::string domain = line.word();
            line.expect(":");
            model.set_opset_version(domain == "ai.onnx" ? "" : domain,
                                    static_cast<int64_t>(line.number(nullptr)));
          } while (line.eat(","));
          line.expect("]");
        }
      } else {
        line.error("expected ir_version= or opsets=[...]");
      }
    }
  }

  Value* reference(Graph& g, const std::string& name) {
    Value* v = g.find_value(name);
    return v != nullptr ? v : g.add_value(name);
  }

  void parse_init(Graph& g, LineParser& line) {
    const std::string name = line.value_name();
    line.expect(":");
    Tensor data = line.tensor(name, true);
    Value* existing = g.find_value(name);
    if (existing != nullptr && (existing->is_constant() || existing->producer() != nullptr)) {
      line.error(str_cat("'%", name, "' is defined twice"));
    }
    if (existing != nullptr) {
      existing->set_constant(std::move(data));
    } else {
      g.add_constant(name, std::move(data));
    }
  }

  void parse_node(Model& model, LineParser& line) {
    Graph& g = *model.graph;
    std::vector<Value*> outputs;
    if (line.peek() == '%' || line.peek() == '_') {
      do {
        if (line.eat("_")) {
          outputs.push_back(nullptr);
          continue;
        }
        const std::string name = line.value_name();
        Value* v = reference(g, name);
        if (v->producer() != nullptr || v->is_constant() || g.is_input(v)) {
          line.error(str_cat("'%", name, "' is defined twice"));
        }
        if (line.eat(":")) v->set_type(line.type());
        outputs.push_back(v);
      } while (line.eat(","));
      line.expect("=");
    }
    NodeSpec spec;
    std::string op = line.word();
    while (line.eat("::")) op += "::" + line.word();
    const size_t split = op.rfind("::");
    if (split != std::string::npos) {
      spec.domain = op.substr(0, split);
      spec.op_type = op.substr(split + 2);
    } else {
      spec.op_type = op;
    }
    const kernels::KernelDef* def = kernels::find_kernel(spec.domain, spec.op_type);
    if (line.eat("[")) {
      do {
        const std::string name = line.word();
        line.expect("=");
        const AttrKind* kind = nullptr;
        if (def != nullptr) {
          for (const kernels::AttrSpec& a : def->attributes) {
            if (a.name == name) kind = &a.kind;
          }
        }
        spec.attrs.set(name, line.attribute(kind));
      } while (line.eat(","));
      line.expect("]");
    }
    line.expect("(");
    if (!line.eat(")")) {
      do {
        if (line.eat("_")) {
          spec.inputs.push_back(nullptr);
        } else {
          spec.inputs.push_back(reference(g, line.value_name()));
        }
      } while (line.eat(","));
      line.expect(")");
    }
    spec.name = outputs.empty() || outputs.front() == nullptr
                    ? g.unique_node_name(spec.op_type)
                    : g.unique_node_name(outputs.front()->name());
    g.add_node_with_outputs(std::move(spec), outputs);
  }

  std::vector<std::string_view> lines_;
};

}  // namespace

Model parse_model(std::string_view text) {
  return GraphTextParser(text).parse();
}

}  // namespace openbpu::ir
