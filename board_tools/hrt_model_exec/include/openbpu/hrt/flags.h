// hrt_model_exec's command line, gflags style, parsed without gflags (the board side links
// the C++ library only):
//   hrt_model_exec model_info|infer|perf --model_file=a.bin[,b.bin] [--flag=value | --flag value]
// Bools take true/false/1/0 ("--flag" alone is true, "--noflag" false); repeating a flag keeps
// the last value; bare tokens after the subcommand are ignored. -v/--version and -h/--help are
// recognised anywhere.
#pragma once

#include <string>
#include <vector>

namespace openbpu::hrt {

enum class Command { kNone, kModelInfo, kInfer, kPerf };

struct Options {
  Command command = Command::kNone;
  bool help = false;
  bool version = false;
  std::string model_file;
  std::string model_name;
  int core_id = 0;
  std::string input_file;
  int frame_count = 0;  // 0: the subcommand's default (infer 1, perf 200)
  bool frame_count_set = false;
  bool enable_dump = false;
  std::string dump_format = "bin";
  int dump_precision = 9;
  int dump_txt_axis = 4;
  bool hybrid_dequantize_process = false;
  bool enable_cls_post_process = false;
  int perf_time = 0;  // minutes
  int thread_num = 1;
  bool thread_num_clamped = false;  // asked for more than 8
  bool roi_infer = false;
  std::string roi;
  std::string dump_path;
  std::string profile_path;
  int dump_intermediate = 0;
};

struct ParseResult {
  bool ok = false;
  std::string error;  // when !ok: one line naming the flag and the rule
  Options options;
};

ParseResult parse_command_line(const std::vector<std::string>& args);  // args without argv[0]

// Splits "a,b,,c" into {"a","b","c"} (empty items dropped).
std::vector<std::string> split_list(const std::string& text, char separator = ',');

std::string usage_text();

}  // namespace openbpu::hrt
