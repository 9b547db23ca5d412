#pragma once
// Linux-only calls Glibc's Swift module does not expose.
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/resource.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

extern int accept4(int sockfd, struct sockaddr *addr, socklen_t *addrlen, int flags);

#include <signal.h>
#include <sys/signalfd.h>

// Blocks `signals` in the calling thread (threads created later inherit it), so
// they stay pending for a signalfd instead of running a handler.
static inline int cepoll_block_signals(const int *signals, int count, sigset_t *set) {
    sigemptyset(set);
    for (int i = 0; i < count; i++) sigaddset(set, signals[i]);
    return pthread_sigmask(SIG_BLOCK, set, NULL);
}

#include <malloc.h>

// Gives free heap memory back to the system (all malloc arenas); returns 1 if any was.
static inline int cepoll_trim_free_memory(void) { return malloc_trim(0); }

// Fixes malloc's mmap and trim thresholds at `bytes` (glibc otherwise slides both up as big
// blocks are freed); returns 1 if both were set.
static inline int cepoll_fix_heap_thresholds(int bytes) {
    return mallopt(M_MMAP_THRESHOLD, bytes) == 1 && mallopt(M_TRIM_THRESHOLD, bytes) == 1;
}
