/*
 * Pod sandbox holder for the bench cluster (containerd's sandbox_image).
 * Keeps the pod's namespaces alive, reaps orphaned children (it is PID 1 of the pod when the
 * pod shares its process namespace) and exits 0 on SIGINT or SIGTERM.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int sig) {
  (void)sig;
  _exit(0);
}

static void reap_children(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

static void on_signal(int sig, void (*handler)(int)) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = handler;
  sa.sa_flags = SA_RESTART;
  if (sigaction(sig, &sa, NULL) != 0) {
    perror("sigaction");
    exit(1);
  }
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "-v") == 0) {
    puts("bench-pause 1");
    return 0;
  }
  on_signal(SIGINT, stop);
  on_signal(SIGTERM, stop);
  on_signal(SIGCHLD, reap_children);
  for (;;) {
    pause();
  }
}
