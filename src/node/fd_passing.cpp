#include "fd_passing.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace taskring::node {

namespace {
// One payload byte (a datagram must carry data) plus room for one descriptor.
struct FdMessage {
  char byte = 'F';
  iovec iov{};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  FdMessage() {
    iov = iovec{&byte, 1};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
  }
};
}  // namespace

Status send_fd(int sock, int fd) {
  FdMessage m;
  cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  if (sendmsg(sock, &m.msg, MSG_DONTWAIT | MSG_NOSIGNAL) != 1)
    return unavailable(std::string("passing a file descriptor failed: ") + std::strerror(errno));
  return Status::Ok();
}

Expected<int> receive_fd(int sock) {
  FdMessage m;
  if (recvmsg(sock, &m.msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) != 1)
    return unavailable(std::string("receiving a file descriptor failed: ") + std::strerror(errno));
  cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
  if (c == nullptr || c->cmsg_type != SCM_RIGHTS) return unavailable("the message carried no file descriptor");
  int fd;
  std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
  return fd;
}

}  // namespace taskring::node
