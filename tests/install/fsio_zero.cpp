// A small program on the installed libfsio (pkg-config fsio): zero a range
// of a file or device with one plug of large merged writes, read it back
// with the same queue, and print the queue's statistics.
//
//   c++ -o fsio_zero fsio_zero.cpp $(pkg-config --cflags --libs fsio)
//   ./fsio_zero disk.img 1048576 8388608
#include <libfsio/buffer.hpp>
#include <libfsio/device.hpp>
#include <libfsio/io_queue.hpp>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s TARGET OFFSET LENGTH\n", argv[0]);
    return 2;
  }
  const std::uint64_t offset = std::strtoull(argv[2], nullptr, 0), length = std::strtoull(argv[3], nullptr, 0);
  fsio::OpenOptions oo;
  oo.write = true;
  auto dev = fsio::Device::open(argv[1], oo);
  if (!dev) return std::fprintf(stderr, "%s\n", dev.error().message().c_str()), 1;
  auto queue = fsio::IoQueue::create(*dev);
  if (!queue) return std::fprintf(stderr, "%s\n", queue.error().message().c_str()), 1;
  fsio::AlignedBuffer zeros(64 * 1024);
  auto plug = queue->plug();
  for (std::uint64_t off = offset; off < offset + length; off += zeros.size()) plug.write(off, zeros.span());
  if (auto st = plug.finish(); !st) return std::fprintf(stderr, "%s\n", st.error().message().c_str()), 1;
  fsio::AlignedBuffer back(length);
  if (auto st = queue->read(offset, back.span()); !st)
    return std::fprintf(stderr, "%s\n", st.error().message().c_str()), 1;
  for (std::byte b : back.span())
    if (b != std::byte{0}) return std::fprintf(stderr, "read back a non-zero byte\n"), 1;
  const auto& s = queue->stats();
  std::printf("%llu requests queued, %llu submitted, %llu bytes written, %s engine\n",
              (unsigned long long)s.requests_queued, (unsigned long long)s.requests_submitted,
              (unsigned long long)s.bytes_written, queue->engine().name());
  return 0;
}
