// wire-limit: the cheapest correct Larder server, as a yardstick for ping.
//
// One thread, epoll (level-triggered), non-blocking sockets. For every frame
// it decodes the 4-byte big-endian length and the RequestEnvelope (protobuf-c),
// and replies with a ResponseEnvelope {call_id, OK, payload = an empty
// grpc.health.v1.HealthCheckResponse}, whatever the method. It reads all that
// is available, answers every complete frame, and writes the replies with one
// send per read batch. A frame above 4 MiB or an undecodable envelope gets a
// connection-level error (call_id 0) and the connection is closed.
//
//   wire_limit [--listen 127.0.0.1:0] [--max-seconds 3600]
//
// Prints "event=listening address=HOST:PORT" on stderr once listening; exits on
// SIGINT/SIGTERM or after --max-seconds. Listens on IPv4 addresses only.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "grpc_health_v1_health.pb-c.h"
#include "larder_rpc_v1_envelope.pb-c.h"

#define MAX_FRAME (4u * 1024u * 1024u)
#define READ_CHUNK (64 * 1024)
#define MAX_EVENTS 256

typedef struct {
  uint8_t *data;
  size_t start, end, cap;
} buf_t;

typedef struct {
  int fd;
  buf_t in, out;
  int want_out;
} conn_t;

static volatile sig_atomic_t stop_requested = 0;
static uint8_t empty_payload[16];
static size_t empty_payload_len = 0;

static void on_signal(int sig) { (void)sig; stop_requested = 1; }

static void die(const char *what) {
  fprintf(stderr, "wire_limit: %s: %s\n", what, strerror(errno));
  exit(1);
}

static void buf_reserve(buf_t *b, size_t n) {
  if (b->cap - b->end >= n) return;
  if (b->start > 0) {
    memmove(b->data, b->data + b->start, b->end - b->start);
    b->end -= b->start;
    b->start = 0;
    if (b->cap - b->end >= n) return;
  }
  size_t cap = b->cap ? b->cap : 4096;
  while (cap - b->end < n) cap *= 2;
  uint8_t *p = realloc(b->data, cap);
  if (!p) die("realloc");
  b->data = p;
  b->cap = cap;
}

static void buf_consume(buf_t *b, size_t n) {
  b->start += n;
  if (b->start == b->end) b->start = b->end = 0;
}

// Appends one framed ResponseEnvelope.
static void append_reply(buf_t *out, uint64_t call_id, int32_t code, const char *message) {
  Larder__Rpc__V1__ResponseEnvelope env;
  larder__rpc__v1__response_envelope__init(&env);
  env.call_id = call_id;
  env.status_code = code;
  env.status_message = (char *)message;
  if (code == 0) {
    env.payload.len = empty_payload_len;
    env.payload.data = empty_payload;
  }
  size_t size = larder__rpc__v1__response_envelope__get_packed_size(&env);
  buf_reserve(out, 4 + size);
  uint8_t *p = out->data + out->end;
  p[0] = (uint8_t)(size >> 24);
  p[1] = (uint8_t)(size >> 16);
  p[2] = (uint8_t)(size >> 8);
  p[3] = (uint8_t)size;
  out->end += 4 + larder__rpc__v1__response_envelope__pack(&env, p + 4);
}

static void conn_free(int ep, conn_t *c) {
  epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
  close(c->fd);
  free(c->in.data);
  free(c->out.data);
  free(c);
}

// Sends pending output; returns -1 when the connection is broken.
static int flush_out(int ep, conn_t *c) {
  while (c->out.end > c->out.start) {
    ssize_t n = send(c->fd, c->out.data + c->out.start, c->out.end - c->out.start, MSG_NOSIGNAL);
    if (n > 0) { buf_consume(&c->out, (size_t)n); continue; }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!c->want_out) {
        struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = c};
        epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
        c->want_out = 1;
      }
      return 0;
    }
    return -1;
  }
  if (c->want_out) {
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
    c->want_out = 0;
  }
  return 0;
}

// Answers every complete frame in the input; returns -1 to close after flushing.
static int handle_frames(conn_t *c) {
  while (c->in.end - c->in.start >= 4) {
    const uint8_t *p = c->in.data + c->in.start;
    uint32_t len = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    if (len > MAX_FRAME) {
      append_reply(&c->out, 0, 8, "frame larger than 4194304 bytes");
      return -1;
    }
    if (c->in.end - c->in.start < 4 + (size_t)len) {
      buf_reserve(&c->in, 4 + (size_t)len - (c->in.end - c->in.start));
      return 0;
    }
    Larder__Rpc__V1__RequestEnvelope *req = larder__rpc__v1__request_envelope__unpack(NULL, len, p + 4);
    if (!req) {
      append_reply(&c->out, 0, 3, "undecodable RequestEnvelope");
      return -1;
    }
    uint64_t call_id = req->call_id;
    larder__rpc__v1__request_envelope__free_unpacked(req, NULL);
    buf_consume(&c->in, 4 + (size_t)len);
    if (call_id == 0) {
      append_reply(&c->out, 0, 3, "call_id must be non-zero");
      return -1;
    }
    append_reply(&c->out, call_id, 0, NULL);
  }
  return 0;
}

// Reads all available input and answers it; returns -1 when the connection should close.
static int on_readable(int ep, conn_t *c) {
  for (;;) {
    buf_reserve(&c->in, READ_CHUNK);
    size_t space = c->in.cap - c->in.end;
    ssize_t n = recv(c->fd, c->in.data + c->in.end, space, 0);
    if (n > 0) {
      c->in.end += (size_t)n;
      int close_after = handle_frames(c);
      if (close_after < 0) { flush_out(ep, c); return -1; }
      if ((size_t)n < space) break;
      continue;
    }
    if (n == 0) return -1;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) break;
    return -1;
  }
  return flush_out(ep, c);
}

static int listen_on(const char *spec, char *bound, size_t bound_len) {
  char host[64];
  const char *colon = strrchr(spec, ':');
  if (!colon || (size_t)(colon - spec) >= sizeof host) { fprintf(stderr, "wire_limit: --listen expects HOST:PORT\n"); exit(2); }
  memcpy(host, spec, (size_t)(colon - spec));
  host[colon - spec] = 0;
  char *end;
  long port = strtol(colon + 1, &end, 10);
  if (*end || port < 0 || port > 65535) { fprintf(stderr, "wire_limit: bad port in %s\n", spec); exit(2); }
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) { fprintf(stderr, "wire_limit: %s is not an IPv4 address\n", host); exit(2); }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) die("socket");
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, (struct sockaddr *)&addr, sizeof addr) < 0) die("bind");
  if (listen(fd, 1024) < 0) die("listen");
  socklen_t alen = sizeof addr;
  getsockname(fd, (struct sockaddr *)&addr, &alen);
  snprintf(bound, bound_len, "%s:%u", host, ntohs(addr.sin_port));
  return fd;
}

int main(int argc, char **argv) {
  const char *listen_spec = "127.0.0.1:7412";
  long max_seconds = 3600;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--listen") && i + 1 < argc) listen_spec = argv[++i];
    else if (!strcmp(argv[i], "--max-seconds") && i + 1 < argc) max_seconds = strtol(argv[++i], NULL, 10);
    else {
      fprintf(stderr, "usage: wire_limit [--listen 127.0.0.1:PORT] [--max-seconds N]\n");
      return 2;
    }
  }
  Grpc__Health__V1__HealthCheckResponse health;
  grpc__health__v1__health_check_response__init(&health);
  empty_payload_len = grpc__health__v1__health_check_response__pack(&health, empty_payload);

  struct sigaction sa = {0};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);

  char bound[96];
  int lfd = listen_on(listen_spec, bound, sizeof bound);
  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) die("epoll_create1");
  struct epoll_event lev = {.events = EPOLLIN, .data.ptr = NULL};
  epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &lev);
  fprintf(stderr, "event=listening address=%s\n", bound);

  struct timespec t0, now;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  struct epoll_event events[MAX_EVENTS];
  while (!stop_requested) {
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (max_seconds > 0 && now.tv_sec - t0.tv_sec >= max_seconds) break;
    int n = epoll_wait(ep, events, MAX_EVENTS, 1000);
    if (n < 0) {
      if (errno == EINTR) continue;
      die("epoll_wait");
    }
    for (int i = 0; i < n; i++) {
      conn_t *c = events[i].data.ptr;
      if (!c) {
        for (;;) {
          int cfd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
          if (cfd < 0) break;
          int one = 1;
          setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          conn_t *nc = calloc(1, sizeof *nc);
          if (!nc) die("calloc");
          nc->fd = cfd;
          struct epoll_event ev = {.events = EPOLLIN, .data.ptr = nc};
          epoll_ctl(ep, EPOLL_CTL_ADD, cfd, &ev);
        }
        continue;
      }
      int broken = 0;
      if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) broken = on_readable(ep, c) < 0;
      if (!broken && (events[i].events & EPOLLOUT)) broken = flush_out(ep, c) < 0;
      if (broken) conn_free(ep, c);
    }
  }
  fprintf(stderr, "event=stopped\n");
  return 0;
}
