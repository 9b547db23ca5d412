/*
 * h2_echo.c - the HTTP/2 wire-limit yardstick for gRPC over HTTP/2.
 *
 * A single-threaded epoll server on libnghttp2 that answers every request stream, whatever
 * its :path, with what a gRPC server sends for a unary call returning an empty message:
 * HEADERS (:status 200, content-type application/grpc), one DATA frame holding the 5-byte
 * gRPC prefix of an empty message, and trailers with grpc-status 0. It reads and drops the
 * request body. Nothing that speaks gRPC correctly over HTTP/2 can answer much more
 * cheaply; "ping over HTTP/2 >= 0.6x this server" is the target it anchors (issue 13 §6).
 *
 * nghttp2 owns no socket: bytes read are fed to nghttp2_session_mem_recv, and everything
 * nghttp2_session_mem_send has for a connection is gathered into one buffer and written once
 * per loop turn.
 *
 *   h2_echo --listen 127.0.0.1:PORT [--max-seconds S]
 *
 * Listens on loopback only (PORT 0 picks a free port), prints
 * "event=listening address=127.0.0.1:PORT" on stderr, and exits after --max-seconds
 * (default 1800) or on SIGINT/SIGTERM. SIGUSR1 prints "event=stats calls=N connections=N"
 * (calls = responses submitted, all with grpc-status 0), and the same line ends every run.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define READ_CHUNK 65536
#define MAX_EVENTS 256

typedef struct {
  int fd;
  nghttp2_session *session;
  uint8_t *out;      /* output gathered during one loop turn */
  size_t out_len;
  size_t out_cap;
  size_t out_off;    /* bytes of out already written (a short write) */
} conn_t;

static unsigned long long g_calls;
static unsigned long long g_connections;

static void die(const char *what) {
  fprintf(stderr, "h2_echo: %s: %s\n", what, strerror(errno));
  exit(1);
}

static void print_stats(void) {
  fprintf(stderr, "event=stats calls=%llu connections=%llu\n", g_calls, g_connections);
  fflush(stderr);
}

/* The 5-byte prefix of an empty, uncompressed gRPC message. */
static ssize_t read_empty_message(nghttp2_session *session, int32_t stream_id, uint8_t *buf, size_t length,
                                  uint32_t *data_flags, nghttp2_data_source *source, void *user_data) {
  (void)source;
  (void)user_data;
  if (length < 5) return NGHTTP2_ERR_DEFERRED; /* never happens: frames hold >= 16 KiB */
  memset(buf, 0, 5);
  *data_flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
  static const nghttp2_nv trailers[] = {
      {(uint8_t *)"grpc-status", (uint8_t *)"0", 11, 1, NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE},
  };
  if (nghttp2_submit_trailer(session, stream_id, trailers, 1) != 0) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  return 5;
}

static int respond(nghttp2_session *session, int32_t stream_id) {
  static const nghttp2_nv headers[] = {
      {(uint8_t *)":status", (uint8_t *)"200", 7, 3, NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE},
      {(uint8_t *)"content-type", (uint8_t *)"application/grpc", 12, 16,
       NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE},
  };
  nghttp2_data_provider body = {.source = {.ptr = NULL}, .read_callback = read_empty_message};
  if (nghttp2_submit_response(session, stream_id, headers, 2, &body) != 0) return NGHTTP2_ERR_CALLBACK_FAILURE;
  g_calls++;
  return 0;
}

/* A request is complete when a HEADERS or DATA frame ends its stream. */
static int on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *user_data) {
  (void)user_data;
  if ((frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) &&
      (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) && frame->hd.stream_id > 0) {
    return respond(session, frame->hd.stream_id);
  }
  return 0;
}

static int out_append(conn_t *c, const uint8_t *data, size_t len) {
  if (c->out_len + len > c->out_cap) {
    size_t cap = c->out_cap ? c->out_cap : 65536;
    while (cap < c->out_len + len) cap *= 2;
    uint8_t *p = realloc(c->out, cap);
    if (p == NULL) return -1;
    c->out = p;
    c->out_cap = cap;
  }
  memcpy(c->out + c->out_len, data, len);
  c->out_len += len;
  return 0;
}

static void conn_close(int ep, conn_t *c) {
  epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
  close(c->fd);
  nghttp2_session_del(c->session);
  free(c->out);
  free(c);
}

/* Gathers what nghttp2 has to send and writes it; 0 = keep, -1 = close. */
static int conn_flush(int ep, conn_t *c) {
  if (c->out_off == c->out_len) {
    c->out_off = c->out_len = 0;
    for (;;) {
      const uint8_t *data;
      ssize_t n = nghttp2_session_mem_send(c->session, &data);
      if (n < 0) return -1;
      if (n == 0) break;
      if (out_append(c, data, (size_t)n) != 0) return -1;
    }
  }
  while (c->out_off < c->out_len) {
    ssize_t w = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (w <= 0) return -1;
    c->out_off += (size_t)w;
  }
  struct epoll_event ev = {.events = EPOLLIN | (c->out_off < c->out_len ? EPOLLOUT : 0), .data.ptr = c};
  epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
  if (c->out_off == c->out_len && !nghttp2_session_want_read(c->session) && !nghttp2_session_want_write(c->session)) {
    return -1;
  }
  return 0;
}

static int conn_read(conn_t *c, uint8_t *buf) {
  for (;;) {
    ssize_t n = read(c->fd, buf, READ_CHUNK);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    if (n <= 0) return -1;
    if (nghttp2_session_mem_recv(c->session, buf, (size_t)n) < 0) return -1;
    if (n < READ_CHUNK) return 0;
  }
}

static conn_t *conn_open(int ep, int fd) {
  static nghttp2_session_callbacks *callbacks;
  static nghttp2_option *option;
  if (callbacks == NULL) {
    if (nghttp2_session_callbacks_new(&callbacks) != 0) return NULL;
    nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, on_frame_recv);
    if (nghttp2_option_new(&option) != 0) return NULL;
    nghttp2_option_set_no_auto_window_update(option, 0);
  }
  conn_t *c = calloc(1, sizeof *c);
  if (c == NULL) return NULL;
  c->fd = fd;
  if (nghttp2_session_server_new2(&c->session, callbacks, c, option) != 0) {
    free(c);
    return NULL;
  }
  nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 1024},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20},
  };
  nghttp2_submit_settings(c->session, NGHTTP2_FLAG_NONE, settings, 2);
  nghttp2_session_set_local_window_size(c->session, NGHTTP2_FLAG_NONE, 0, 1 << 24);
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
  if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
    nghttp2_session_del(c->session);
    free(c);
    return NULL;
  }
  return c;
}

static int parse_listen(const char *arg, struct sockaddr_in *sa) {
  const char *colon = strrchr(arg, ':');
  if (colon == NULL) return -1;
  char host[64];
  size_t hl = (size_t)(colon - arg);
  if (hl == 0 || hl >= sizeof host) return -1;
  memcpy(host, arg, hl);
  host[hl] = '\0';
  char *end;
  long port = strtol(colon + 1, &end, 10);
  if (*end != '\0' || port < 0 || port > 65535) return -1;
  memset(sa, 0, sizeof *sa);
  sa->sin_family = AF_INET;
  sa->sin_port = htons((uint16_t)port);
  if (inet_pton(AF_INET, host, &sa->sin_addr) != 1) return -1;
  if ((ntohl(sa->sin_addr.s_addr) >> 24) != 127) return -1; /* loopback only */
  return 0;
}

int main(int argc, char **argv) {
  const char *listen_arg = "127.0.0.1:0";
  long max_seconds = 1800;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc) listen_arg = argv[++i];
    else if (strcmp(argv[i], "--max-seconds") == 0 && i + 1 < argc) max_seconds = strtol(argv[++i], NULL, 10);
    else {
      fprintf(stderr, "usage: h2_echo [--listen 127.0.0.1:PORT] [--max-seconds S]\n");
      return 2;
    }
  }
  struct sockaddr_in sa;
  if (parse_listen(listen_arg, &sa) != 0) {
    fprintf(stderr, "h2_echo: --listen: expected 127.x.x.x:PORT (loopback only), got \"%s\"\n", listen_arg);
    return 2;
  }
  if (max_seconds <= 0) max_seconds = 1800;

  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGUSR1);
  sigprocmask(SIG_BLOCK, &sigs, NULL);
  signal(SIGPIPE, SIG_IGN);
  int sfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);
  if (sfd < 0) die("signalfd");

  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (lfd < 0) die("socket");
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(lfd, (struct sockaddr *)&sa, sizeof sa) != 0) die("bind");
  if (listen(lfd, 1024) != 0) die("listen");
  socklen_t sl = sizeof sa;
  getsockname(lfd, (struct sockaddr *)&sa, &sl);
  char addr[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &sa.sin_addr, addr, sizeof addr);
  fprintf(stderr, "event=listening address=%s:%u\n", addr, ntohs(sa.sin_port));
  fflush(stderr);

  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) die("epoll_create1");
  int lfd_tag = 0, sfd_tag = 0; /* distinct addresses mark the listener and the signal fd */
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &lfd_tag};
  epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
  ev.data.ptr = &sfd_tag;
  epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);

  uint8_t *buf = malloc(READ_CHUNK);
  if (buf == NULL) die("malloc");
  const time_t deadline = time(NULL) + max_seconds;
  struct epoll_event events[MAX_EVENTS];
  int running = 1;
  while (running) {
    if (time(NULL) >= deadline) {
      fprintf(stderr, "event=max_seconds\n");
      break;
    }
    int n = epoll_wait(ep, events, MAX_EVENTS, 1000);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) die("epoll_wait");
    for (int i = 0; i < n; i++) {
      void *tag = events[i].data.ptr;
      if (tag == &sfd_tag) {
        struct signalfd_siginfo si;
        while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
          if (si.ssi_signo == SIGUSR1) print_stats();
          else running = 0;
        }
      } else if (tag == &lfd_tag) {
        for (;;) {
          int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
          if (fd < 0) break;
          setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          conn_t *c = conn_open(ep, fd);
          if (c == NULL) {
            close(fd);
            continue;
          }
          g_connections++;
          if (conn_flush(ep, c) != 0) conn_close(ep, c);
        }
      } else {
        conn_t *c = tag;
        int bad = (events[i].events & (EPOLLERR | EPOLLHUP)) && !(events[i].events & EPOLLIN);
        if (!bad && (events[i].events & EPOLLIN)) bad = conn_read(c, buf) != 0;
        if (bad || conn_flush(ep, c) != 0) conn_close(ep, c);
      }
    }
  }
  print_stats();
  free(buf);
  return 0;
}
