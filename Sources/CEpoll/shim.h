#pragma once
// Linux-only calls Glibc's Swift module does not expose.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/resource.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

extern int accept4(int sockfd, struct sockaddr *addr, socklen_t *addrlen, int flags);
