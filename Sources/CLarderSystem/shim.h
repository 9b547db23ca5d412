#pragma once
// Portable POSIX calls Glibc's Swift module does not expose (no _GNU_SOURCE).
#include <pthread.h>
#include <stddef.h>

#if defined(__linux__)
#include <spawn.h>
// glibc 2.34 and 2.29: the tests' child processes (SpawnedProcess) close every other
// descriptor and start in a directory of their own.
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
extern int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *actions, const char *path);
extern int pthread_setname_np(pthread_t thread, const char *name);
extern int pthread_getname_np(pthread_t thread, char *name, size_t size);
extern int pthread_getattr_np(pthread_t thread, pthread_attr_t *attr);
#endif

// Names the calling thread (Linux keeps at most 15 bytes; the caller cuts it).
static inline int clarder_set_current_thread_name(const char *name) {
#if defined(__APPLE__)
    return pthread_setname_np(name);
#else
    return pthread_setname_np(pthread_self(), name);
#endif
}

// Copies the calling thread's name into `name` (`size` bytes, NUL-terminated).
static inline int clarder_current_thread_name(char *name, size_t size) {
    return pthread_getname_np(pthread_self(), name, size);
}

// The calling thread's stack size in bytes (0 if unknown).
static inline size_t clarder_current_thread_stack_size(void) {
#if defined(__APPLE__)
    return pthread_get_stacksize_np(pthread_self());
#else
    pthread_attr_t attributes;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attributes) != 0) return 0;
    if (pthread_attr_getstacksize(&attributes, &size) != 0) size = 0;
    pthread_attr_destroy(&attributes);
    return size;
#endif
}

#if defined(__linux__)
#include <sys/prctl.h>
#endif

// Sets how late the kernel may end the calling thread's timed waits (poll, select, epoll_wait,
// nanosleep), in nanoseconds; Linux's default is 50 µs. 0 when set, -1 where not supported.
static inline int clarder_set_current_thread_timer_slack(unsigned long nanoseconds) {
#if defined(__linux__)
    return prctl(PR_SET_TIMERSLACK, nanoseconds, 0, 0, 0);
#else
    (void)nanoseconds;
    return -1;
#endif
}

// The calling thread's timer slack in nanoseconds; -1 where not supported.
static inline long clarder_current_thread_timer_slack(void) {
#if defined(__linux__)
    return prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
#else
    return -1;
#endif
}
