// fio job files (fio HOWTO, "Job file format"): an ini file whose [sections]
// are jobs, [global] sets defaults for the jobs below it, ';' or '#' starts
// a comment line, "include FILE" pulls in a file of options (nested
// includes allowed, no sections), and ${VAR} in a value is the environment
// variable VAR (empty when unset). This module reads the text into sections
// of key/value lines; what the keys mean is fio_options.hpp's business.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libfsio/result.hpp"

namespace bench {

// One "key=value" (or bare "key") line, with where it came from for errors.
struct FioLine {
  std::string key;
  std::string value;
  bool has_value = false;  // "direct" alone is not "direct="
  std::string where;       // "job.fio:12" or "command line"
};

struct FioSection {
  std::string name;  // "global" for a global section
  std::vector<FioLine> lines;
  std::string where;
  bool is_global() const { return name == "global"; }
};

// Looks a variable up; the default reads the environment.
using FioEnv = std::function<std::optional<std::string>(const std::string&)>;
FioEnv process_env();

// Parses job-file text. `path` names the file in errors and anchors relative
// include paths (fio resolves them against the including file's directory).
// Errors are Errc::invalid_argument naming file and line ("job.fio:7:
// expected [section], key=value or include FILE"). `read`, when given, gets
// the path of every file included.
fsio::Result<std::vector<FioSection>> parse_fio_job_text(std::string_view text, const std::string& path,
                                                         const FioEnv& env = process_env(),
                                                         std::vector<std::string>* read = nullptr);
// Reads and parses a file (at most 1 MiB: a job file, not a disk image).
// `read`, when given, gets the path of every file read: this one and each
// it includes (a benchmark must not write over any of them, apart.hpp).
fsio::Result<std::vector<FioSection>> parse_fio_job_file(const std::string& path, const FioEnv& env = process_env(),
                                                         std::vector<std::string>* read = nullptr);

// Splits a command-line or job-file option "key=value" / "key".
FioLine split_fio_option(std::string_view text, const std::string& where);

// Expands ${VAR} in `value` (fio: unset or empty variables become "").
std::string expand_fio_env(std::string_view value, const FioEnv& env);

// True when `head` (the start of a file) reads as a fio job file: text whose
// first line that is neither blank nor a comment is a [section] header or
// an "include FILE" line (which fio then refuses outside a section). Such
// a file is a job file, never a benchmark target.
bool looks_like_fio_job(std::string_view head);

// What the start of a file looks like when it is text: "a fio job file",
// "a script (#!/bin/sh)", "a JSON document", "an XML document", "a config
// file", "a text file"; nullopt for binary data (a NUL byte, invalid UTF-8,
// control characters) or an empty file. A write benchmark refuses to
// overwrite what this names (see open_bench_target).
std::optional<std::string> describe_text(std::string_view head);

}  // namespace bench
