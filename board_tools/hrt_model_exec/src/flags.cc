#include "openbpu/hrt/flags.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>

namespace openbpu::hrt {
namespace {

enum class Kind { kString, kInt, kBool };

struct FlagSpec {
  Kind kind;
  std::function<std::string(Options&, const std::string&)> set;  // "" or the rule broken
};

std::optional<bool> parse_bool(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  if (text == "true" || text == "1") return true;
  if (text == "false" || text == "0") return false;
  return std::nullopt;
}

std::optional<int> parse_int(const std::string& text) {
  int value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

FlagSpec string_flag(std::string Options::*member, std::function<std::string(const std::string&)> check = nullptr) {
  return {Kind::kString, [member, check](Options& o, const std::string& v) {
            if (check) {
              std::string rule = check(v);
              if (!rule.empty()) return rule;
            }
            o.*member = v;
            return std::string();
          }};
}

FlagSpec int_flag(int Options::*member, int lo, int hi, std::string rule) {
  return {Kind::kInt, [member, lo, hi, rule](Options& o, const std::string& v) {
            const std::optional<int> n = parse_int(v);
            if (!n) return "'" + v + "' is not an integer";
            if (*n < lo || *n > hi) return "must be " + rule + ", got " + v;
            o.*member = *n;
            return std::string();
          }};
}

FlagSpec bool_flag(bool Options::*member) {
  return {Kind::kBool, [member](Options& o, const std::string& v) {
            const std::optional<bool> b = parse_bool(v);
            if (!b) return "'" + v + "' is not a bool (true, false, 1 or 0)";
            o.*member = *b;
            return std::string();
          }};
}

const std::map<std::string, FlagSpec>& flag_table() {
  static const std::map<std::string, FlagSpec> table = [] {
    std::map<std::string, FlagSpec> t;
    t.emplace("model_file", string_flag(&Options::model_file, [](const std::string& v) {
                return split_list(v).empty() ? std::string("must name at least one model file") : std::string();
              }));
    t.emplace("model_name", string_flag(&Options::model_name));
    t.emplace("core_id", int_flag(&Options::core_id, 0, 2, "0 (any core), 1 (core 0) or 2 (core 1)"));
    t.emplace("input_file", string_flag(&Options::input_file));
    t.emplace("frame_count", FlagSpec{Kind::kInt, [](Options& o, const std::string& v) {
                const std::optional<int> n = parse_int(v);
                if (!n) return "'" + v + "' is not an integer";
                if (*n < 1) return "must be at least 1, got " + v;
                o.frame_count = *n;
                o.frame_count_set = true;
                return std::string();
              }});
    t.emplace("enable_dump", bool_flag(&Options::enable_dump));
    t.emplace("dump_format", string_flag(&Options::dump_format, [](const std::string& v) {
                return v == "bin" || v == "txt" ? std::string() : "must be bin or txt, got '" + v + "'";
              }));
    t.emplace("dump_precision", int_flag(&Options::dump_precision, 0, 30, "in [0, 30]"));
    t.emplace("dump_txt_axis", int_flag(&Options::dump_txt_axis, 0, 8, "in [0, n] (n = the output's rank, at most 8)"));
    t.emplace("hybrid_dequantize_process", bool_flag(&Options::hybrid_dequantize_process));
    t.emplace("enable_cls_post_process", bool_flag(&Options::enable_cls_post_process));
    t.emplace("perf_time", int_flag(&Options::perf_time, 0, 100000, "a number of minutes >= 0"));
    t.emplace("thread_num", FlagSpec{Kind::kInt, [](Options& o, const std::string& v) {
                const std::optional<int> n = parse_int(v);
                if (!n) return "'" + v + "' is not an integer";
                if (*n < 1) return "must be in [1, 8] (larger values are clamped to 8), got " + v;
                o.thread_num_clamped = *n > 8;
                o.thread_num = std::min(*n, 8);
                return std::string();
              }});
    t.emplace("roi_infer", bool_flag(&Options::roi_infer));
    t.emplace("roi", string_flag(&Options::roi));
    t.emplace("dump_path", string_flag(&Options::dump_path));
    t.emplace("profile_path", string_flag(&Options::profile_path));
    t.emplace("dump_intermediate", int_flag(&Options::dump_intermediate, 0, 3, "0, 1, 2 or 3"));
    return t;
  }();
  return table;
}

}  // namespace

std::vector<std::string> split_list(const std::string& text, char separator) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(separator, start);
    if (end == std::string::npos) end = text.size();
    if (end > start) items.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return items;
}

ParseResult parse_command_line(const std::vector<std::string>& args) {
  ParseResult r;
  Options& o = r.options;
  const auto& table = flag_table();
  auto fail = [&r](std::string message) {
    r.ok = false;
    r.error = std::move(message);
    return r;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-v" || arg == "--version" || arg == "-version") {
      o.version = true;
      continue;
    }
    if (arg == "-h" || arg == "--help" || arg == "-help" || arg == "--helpfull") {
      o.help = true;
      continue;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      // The first bare token is the subcommand; later bare tokens are ignored (as gflags does).
      if (o.command == Command::kNone) {
        if (arg == "model_info") {
          o.command = Command::kModelInfo;
        } else if (arg == "infer") {
          o.command = Command::kInfer;
        } else if (arg == "perf") {
          o.command = Command::kPerf;
        } else {
          return fail("unknown subcommand '" + arg + "' (model_info, infer or perf)");
        }
      }
      continue;
    }
    if (arg == "--") break;
    std::string body = arg.substr(arg[1] == '-' ? 2 : 1);
    std::optional<std::string> value;
    if (const size_t eq = body.find('='); eq != std::string::npos) {
      value = body.substr(eq + 1);
      body.resize(eq);
    }
    auto it = table.find(body);
    if (it == table.end() && !value && body.rfind("no", 0) == 0) {
      // gflags' --noflag for bools.
      auto neg = table.find(body.substr(2));
      if (neg != table.end() && neg->second.kind == Kind::kBool) {
        (void)neg->second.set(o, "false");
        continue;
      }
    }
    if (it == table.end()) return fail("unknown flag '--" + body + "' (hrt_model_exec --help lists the flags)");
    const FlagSpec& spec = it->second;
    if (!value) {
      if (spec.kind == Kind::kBool) {
        // "--flag" alone is true; "--flag true|false|1|0" takes the next token.
        if (i + 1 < args.size() && parse_bool(args[i + 1])) {
          value = args[++i];
        } else {
          value = "true";
        }
      } else {
        if (i + 1 >= args.size()) return fail("flag '--" + body + "' needs a value (--" + body + "=<value>)");
        value = args[++i];
      }
    }
    const std::string rule = spec.set(o, *value);
    if (!rule.empty()) return fail("flag '--" + body + "': " + rule);
  }
  r.ok = true;
  return r;
}

std::string usage_text() {
  return R"(Usage: hrt_model_exec model_info|infer|perf --model_file=<a.bin[,b.bin]> [flags]

  model_info   print the inputs and outputs of every model (or of --model_name)
  infer        run --frame_count frames (default 1) on --input_file and print the outputs
  perf         run frames on --thread_num threads and print latency and FPS

Flags (--flag=value or --flag value; bools: true/false/1/0, --flag alone is true):
  --model_file                 model file(s), comma separated (required)
  --model_name                 the model to use when the files hold several
  --core_id                    0 any core (default), 1 core 0, 2 core 1
  --input_file                 one file per model input, comma separated:
                               .bin (raw bytes), .npy, .txt (numbers), .jpg/.jpeg/.png (image inputs)
  --frame_count                frames to run (infer: 1, perf: 200)
  --enable_dump                infer: write every output to <dump_path>/model_infer_output_<i>_<name>.<bin|txt>
  --dump_format                bin (default) or txt
  --dump_precision             decimals of float values in txt dumps (default 9)
  --dump_txt_axis              txt dumps: a line break after every index of the axes before this one (default 4)
  --hybrid_dequantize_process  with --enable_dump: dequantize integer outputs (SCALE / SHIFT) to float txt
  --enable_cls_post_process    infer: print the top-5 classes of the (single) output
  --perf_time                  perf: run for this many minutes (overrides --frame_count)
  --thread_num                 perf: threads, 1..8 (larger values are clamped to 8)
  --dump_path                  folder for --enable_dump / --dump_intermediate files (default: the current folder)
  --roi_infer                  resizer models (hbDNNRoiInfer): a resizer input's file is its source image
                               (.jpg/.png, or a uint8 .npy: RGB (H,W,3) or (1,3,H,W), NV12 (H*3/2,W), Y (H,W))
  --roi                        with --roi_infer: ROIs left,top,right,bottom (inclusive), ';' between them,
                               one per resizer input per batch; or a ROI file (.txt, one ROI per line)
                               after the input files
  --profile_path               folder for profiler.log / profiler.csv (sets HB_DNN_PROFILER_LOG_PATH)
  --dump_intermediate          1: the model inputs and every layer's outputs (BPU segments, CPU operators)
                               as .bin in <dump_path> (HB_DNN_DUMP_PATH; docs/runtime.md); 2 and 3:
                               also a .txt beside each .bin (HB_DNN_DUMP_FORMAT); BPU outputs have
                               their valid shape at every level (no aligned dumps)
  -v, --version                print the dnn library version
  -h, --help                   print this help
)";
}

}  // namespace openbpu::hrt
