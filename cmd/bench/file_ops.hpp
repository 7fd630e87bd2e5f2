// fio's file-operation engines (engines/fileoperations.c in fio 3.33):
// filecreate, filestat and filedelete move no data. Each of a job's nrfiles
// files is "opened" once, and the open is the operation timed: open(O_CREAT
// | O_RDWR, 0600), stat(2), or unlink(2). Its time is a completion-latency
// sample (fio's add_clat_sample) in the job's direction (read unless the job
// only writes); the file's requests then complete at once, counted in bytes
// and requests but in no latency (fio's FIO_FAKEIO | FIO_NOSTATS), so a
// file of filesize= bytes in bs= requests is filesize/bs requests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cmd/bench/run.hpp"
#include "libfsio/result.hpp"

namespace bench {

enum class FileOp { none, create, stat, remove };
const char* file_op_engine(FileOp op);  // fio's engine name: "filecreate", ...

struct FileOpJob {
  FileOp op = FileOp::none;
  BenchRw rw = BenchRw::read;
  std::vector<std::string> files;  // DIRECTORY/JOB.CLONE.I, I < nrfiles, as fio names them
  std::uint64_t file_bytes = 0;    // bytes counted per file: filesize=, else size= / nrfiles
  std::uint64_t bs = 0;
};

// fio's setup before the job: filestat and filedelete work on files that
// exist, so a missing or short file is written out to file_bytes first
// (fio's "Laying out IO file"); filecreate makes nothing beforehand (fio's
// FIO_DISKLESSIO), nor does any engine with create_on_open=1.
fsio::Status lay_out_file_op_files(const FileOpJob& job, bool create_on_open);

// Runs the job's operation on each file in turn, one at a time (a file is
// closed again before the next is touched, so openfiles= of any value
// holds). An operation that fails ends the job with its errno, as in fio.
fsio::Result<BenchResult> run_file_ops(const FileOpJob& job);

}  // namespace bench
