// fio's net engine (engines/net.c in fio 3.33) over IPv4 TCP and UDP; see
// task_engines.hpp for what a job does. The UDP framing follows fio's byte
// for byte, so either side may be fio: the "link open" message is two
// big-endian 32-bit words (magic, FIO_LINK_OPEN), "link close" the same
// words little-endian (fio writes them so), and the last 24 bytes of each
// datagram of 24 bytes or more are a little-endian sequence trailer.
//
//   link message:  +0 magic 0x6c696e6b ("link")   +4 cmd (0x98 open, 0x89 close)
//   seq trailer:   +0 magic 0x657375716e556563   +8 seq   +16 datagram size
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "cmd/bench/task_engines.hpp"
#include "libfsio/endian.hpp"
#include "libfsio/progress.hpp"

namespace bench {

using fsio::Errc;
using fsio::errno_error;
using fsio::make_error;

namespace {

constexpr std::uint32_t link_magic = 0x6c696e6b, link_open = 0x98, link_close = 0x89;
constexpr std::uint64_t seq_magic = 0x657375716e556563ULL;
constexpr std::size_t seq_bytes = 24;

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

bool is_multicast(in_addr a) { return (ntohl(a.s_addr) >> 28) == 0xe; }  // 224.0.0.0/4

fsio::Result<in_addr> ipv4_of(const std::string& host) {
  in_addr a{};
  if (::inet_pton(AF_INET, host.c_str(), &a) == 1) return a;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &res); rc != 0 || !res)
    return make_error(Errc::not_found, "net: hostname " + host + ": " + ::gai_strerror(rc));
  a = reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr;
  ::freeaddrinfo(res);
  return a;
}

sockaddr_in address(in_addr a, unsigned port) {
  sockaddr_in s{};
  s.sin_family = AF_INET;
  s.sin_addr = a;
  s.sin_port = htons(std::uint16_t(port));
  return s;
}

// Waits until fd is ready for `events`, or a signal asks ddbench to stop.
fsio::Result<bool> wait_ready(int fd, short events) {
  pollfd p{fd, events, 0};
  while (true) {
    if (fsio::InterruptGuard::requested()) return false;
    const int rc = ::poll(&p, 1, 100);
    if (rc > 0) return true;
    if (rc < 0 && errno != EINTR) return errno_error(errno, "net: poll");
  }
}

fsio::Result<Fd> new_socket(NetProtocol p, const std::string& what) {
  Fd fd(::socket(AF_INET, p == NetProtocol::tcp ? SOCK_STREAM : SOCK_DGRAM, 0));
  if (fd.get() < 0) return errno_error(errno, "net: socket for " + what);
  return fd;
}

fsio::Status set_option(int fd, int level, int name, const void* value, socklen_t len, const char* what) {
  if (::setsockopt(fd, level, name, value, len) != 0) return errno_error(errno, std::string("net: setsockopt ") + what);
  return {};
}

// fio's listening side: SO_REUSEADDR and SO_REUSEPORT, bound to port on
// every address (or on the multicast group it joins).
fsio::Result<Fd> bound_socket(const NetOptions& net, unsigned port) {
  Fd fd = FSIO_TRY(new_socket(net.protocol, "port " + std::to_string(port)));
  const int one = 1;
  FSIO_TRY(set_option(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one, "SO_REUSEADDR"));
  FSIO_TRY(set_option(fd.get(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof one, "SO_REUSEPORT"));
  in_addr bind_to{htonl(INADDR_ANY)};
  if (!net.hostname.empty()) {  // check_net_job: a multicast group
    ip_mreq mr{};
    mr.imr_multiaddr = bind_to = FSIO_TRY(ipv4_of(net.hostname));
    mr.imr_interface.s_addr = htonl(INADDR_ANY);
    if (!net.interface.empty()) mr.imr_interface = FSIO_TRY(ipv4_of(net.interface));
    FSIO_TRY(set_option(fd.get(), IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof mr, "IP_ADD_MEMBERSHIP"));
  }
  const sockaddr_in a = address(bind_to, port);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0)
    return errno_error(errno, "net: bind port " + std::to_string(port));
  return fd;
}

// TCP: one connection, accepted on port or made to hostname:port.
fsio::Result<Fd> tcp_connection(const NetOptions& net, unsigned port) {
  Fd fd;
  if (net.listen) {
    Fd listener = FSIO_TRY(bound_socket(net, port));
    if (::listen(listener.get(), 10) != 0) return errno_error(errno, "net: listen on port " + std::to_string(port));
    if (!FSIO_TRY(wait_ready(listener.get(), POLLIN))) return make_error(Errc::io, "net: interrupted");
    fd = Fd(::accept(listener.get(), nullptr, nullptr));
    if (fd.get() < 0) return errno_error(errno, "net: accept on port " + std::to_string(port));
  } else {
    fd = FSIO_TRY(new_socket(NetProtocol::tcp, net.hostname));
    const sockaddr_in a = address(FSIO_TRY(ipv4_of(net.hostname)), port);
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0)
      return errno_error(errno, "net: connect to " + net.hostname + " port " + std::to_string(port));
  }
  const int on = net.nodelay ? 1 : 0;
  FSIO_TRY(set_option(fd.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on, "TCP_NODELAY"));
  return fd;
}

// fio's link message: little-endian when it closes, but big-endian when it
// opens (fio writes the one with cpu_to_le32, the other with htonl).
struct LinkMessage {
  fsio::le32 magic, cmd;
};
static_assert(sizeof(LinkMessage) == 8);
struct SeqTrailer {
  fsio::le64 magic, seq, bytes;
};
static_assert(sizeof(SeqTrailer) == seq_bytes);

LinkMessage link_message(std::uint32_t cmd) {
  if (cmd == link_open) return {__builtin_bswap32(link_magic), __builtin_bswap32(cmd)};
  return {link_magic, cmd};
}

bool is_link(const std::byte* p, ssize_t n, std::uint32_t cmd) {
  if (n != ssize_t(sizeof(LinkMessage))) return false;
  const auto m = fsio::load<LinkMessage>({p, sizeof(LinkMessage)});
  const LinkMessage want = link_message(cmd);
  return m.magic == want.magic && m.cmd == want.cmd;
}

// A connected stream, or a datagram socket and its peer.
struct Link {
  Fd fd;
  NetProtocol protocol = NetProtocol::tcp;
  sockaddr_in peer{};   // UDP: the writer's destination; the reader's last sender
  bool reader = false;  // UDP: a datagram's sender becomes the peer (the writer's answers do not)
  std::uint64_t send_seq = 0, recv_seq = 0;
};

fsio::Status send_link(const Link& l, std::uint32_t cmd) {
  const LinkMessage m = link_message(cmd);
  if (::sendto(l.fd.get(), &m, sizeof m, 0, reinterpret_cast<const sockaddr*>(&l.peer), sizeof l.peer) < 0)
    return errno_error(errno, "net: send the UDP link message");
  return {};
}

// UDP, the reader: its bound socket, once the writer's "link open" came.
fsio::Result<Link> udp_reader(const NetOptions& net, unsigned port) {
  Link l{FSIO_TRY(bound_socket(net, port)), NetProtocol::udp};
  l.reader = true;
  std::byte m[64];
  socklen_t len = sizeof l.peer;
  if (!FSIO_TRY(wait_ready(l.fd.get(), POLLIN))) return make_error(Errc::io, "net: interrupted");
  const ssize_t n = ::recvfrom(l.fd.get(), m, sizeof m, 0, reinterpret_cast<sockaddr*>(&l.peer), &len);
  if (n < 0) return errno_error(errno, "net: receive the UDP link open");
  if (!is_link(m, n, link_open)) return make_error(Errc::corrupt, "net: the first datagram is not fio's link open");
  return l;
}

// UDP, the writer: to hostname:port (a group: through interface, with ttl).
fsio::Result<Link> udp_writer(const NetOptions& net, unsigned port) {
  Link l{FSIO_TRY(new_socket(NetProtocol::udp, net.hostname)), NetProtocol::udp};
  const in_addr to = FSIO_TRY(ipv4_of(net.hostname));
  if (is_multicast(to)) {
    if (!net.interface.empty()) {
      const in_addr via = FSIO_TRY(ipv4_of(net.interface));
      FSIO_TRY(set_option(l.fd.get(), IPPROTO_IP, IP_MULTICAST_IF, &via, sizeof via, "IP_MULTICAST_IF"));
    }
    const unsigned ttl = net.ttl;
    FSIO_TRY(set_option(l.fd.get(), IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof ttl, "IP_MULTICAST_TTL"));
  }
  l.peer = address(to, port);
  FSIO_TRY(send_link(l, link_open));
  return l;
}

fsio::Status send_all(const Link& l, const std::byte* p, std::size_t n, int flags) {
  if (l.protocol == NetProtocol::udp) {
    if (::sendto(l.fd.get(), p, n, 0, reinterpret_cast<const sockaddr*>(&l.peer), sizeof l.peer) < 0)
      return errno_error(errno, "net: send " + std::to_string(n) + " bytes");
    return {};
  }
  for (std::size_t done = 0; done < n;) {
    const ssize_t k = ::send(l.fd.get(), p + done, n - done, flags | MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return errno_error(errno, "net: send " + std::to_string(n) + " bytes");
    done += std::size_t(k);
  }
  return {};
}

// One read: what came (0: the peer is gone). A UDP reader's peer becomes the sender.
fsio::Result<std::size_t> receive(Link& l, std::byte* p, std::size_t n) {
  if (!FSIO_TRY(wait_ready(l.fd.get(), POLLIN))) return std::size_t{0};
  socklen_t len = sizeof l.peer;
  const ssize_t k = l.reader ? ::recvfrom(l.fd.get(), p, n, 0, reinterpret_cast<sockaddr*>(&l.peer), &len)
                             : ::recv(l.fd.get(), p, n, 0);
  if (k < 0) return errno_error(errno, "net: receive " + std::to_string(n) + " bytes");
  return std::size_t(k);
}

// A UDP reader's count of the datagrams that never came, from the trailer
// the writer put at the end of a whole datagram (fio's verify_udp_seq).
std::uint64_t missed(Link& l, std::span<const std::byte> got, std::size_t bs) {
  if (bs < seq_bytes || got.size() != bs) return 0;
  const auto t = fsio::load<SeqTrailer>(got, bs - seq_bytes);
  if (t.magic != seq_magic || t.bytes != bs) return 0;
  const std::uint64_t seq = t.seq, expected = l.recv_seq;
  l.recv_seq = seq + 1;
  return seq > expected ? seq - expected : 0;
}

}  // namespace

fsio::Status check_net_job(const NetOptions& net, BenchRw rw) {
  const bool udp = net.protocol == NetProtocol::udp, writes = bench_writes(rw);
  const char* why = nullptr;
  in_addr a{};
  const bool group = ::inet_pton(AF_INET, net.hostname.c_str(), &a) == 1 && is_multicast(a);
  if (bench_random(rw)) why = "network I/O cannot be random (fio: the same)";
  else if (net.port == 0 || net.port > 65535) why = "needs port= (1 to 65535), as fio's";
  else if (udp && net.listen) why = "listen is for TCP only, as in fio (a UDP reader binds its port)";
  else if (!udp && !net.listen && net.hostname.empty()) why = "needs hostname= to connect to, or listen";
  else if (udp && writes && net.hostname.empty()) why = "needs hostname= to send to";
  else if ((net.listen || (udp && !writes)) && !net.hostname.empty() && !(udp && group))
    why = "a receiving side takes no hostname= but a UDP multicast group (fio: the same)";
  else if (!net.interface.empty() && !group) why = "interface= is for a multicast hostname=";
  if (!why) return {};
  return make_error(Errc::invalid_argument, std::string("ioengine=net: ") + why);
}

fsio::Result<BenchResult> run_net(const NetOptions& net, const TaskRun& run) {
  const unsigned port = net.port + run.clone;  // fio: port += subjob_number
  const bool writes = bench_writes(run.rw), udp = net.protocol == NetProtocol::udp;
  Link link = udp ? (writes ? FSIO_TRY(udp_writer(net, port)) : FSIO_TRY(udp_reader(net, port)))
                  : Link{FSIO_TRY(tcp_connection(net, port)), NetProtocol::tcp};
  std::vector<std::byte> buf(std::size_t(run.bs), std::byte{0x5a});
  std::uint64_t sent = 0;
  auto res = FSIO_TRY(run_task_loop(run, "net", true, [&](std::uint64_t) -> fsio::Result<std::optional<TaskStep>> {
    TaskStep step;
    if (writes) {
      if (udp && buf.size() >= seq_bytes)
        fsio::store<SeqTrailer>(buf, {seq_magic, link.send_seq++, buf.size()}, buf.size() - seq_bytes);
      // fio: MSG_MORE while more is to follow, unless each request waits for its answer
      const bool more = !net.pingpong && (run.size == 0 || sent + buf.size() < run.size);
      FSIO_TRY(send_all(link, buf.data(), buf.size(), more ? MSG_MORE : 0));
      sent += step.bytes = buf.size();
      if (net.pingpong) (void)FSIO_TRY(receive(link, buf.data(), buf.size()));
      return std::optional{step};
    }
    const std::size_t n = FSIO_TRY(receive(link, buf.data(), buf.size()));
    if (n == 0 || is_link(buf.data(), ssize_t(n), link_close)) return std::optional<TaskStep>{};
    step.bytes = n;
    if (udp) step.dropped = missed(link, {buf.data(), n}, buf.size());
    if (net.pingpong) FSIO_TRY(send_all(link, buf.data(), n, 0));
    return std::optional{step};
  }));
  if (writes && udp) FSIO_TRY(send_link(link, link_close));
  return res;
}

}  // namespace bench
