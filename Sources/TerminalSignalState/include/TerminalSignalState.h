#ifndef SCROLLBACK_TERMINAL_SIGNAL_STATE_H
#define SCROLLBACK_TERMINAL_SIGNAL_STATE_H

/* Signals that end the program are caught here and only recorded; the event loop looks
   at them (with SIGTSTP) at every turn, restores the terminal, and then acts. The
   handler is process-wide, so it does not matter which thread a signal lands on.

   The state lives in TerminalSignalState.c, once for the whole program: a static
   variable in a header is one per module that uses it, and an optimized build that
   inlines across modules then records a signal in one copy and looks in another (the
   release build ignored SIGTERM). */

/* Records `signal` when it arrives; 0 when it stays ignored (the parent ignored it). */
int scrollback_catch_signal(int signal);
/* Back to the default action. */
int scrollback_default_signal(int signal);
/* The first terminating signal caught, or 0 (it stays recorded). */
int scrollback_take_signal(void);
/* 1 once per SIGTSTP caught. */
int scrollback_take_stop_request(void);
int scrollback_sigrtmin(void);
/* Forgets `signal` if it is the one recorded (Ctrl-C that only meant "back"). */
void scrollback_forget_signal(int signal);

/* The wait status macros, as functions Swift can call. */
#include <sys/wait.h>
static inline int scrollback_wifexited(int status) { return WIFEXITED(status); }
static inline int scrollback_wexitstatus(int status) { return WEXITSTATUS(status); }
static inline int scrollback_wifsignaled(int status) { return WIFSIGNALED(status); }
static inline int scrollback_wtermsig(int status) { return WTERMSIG(status); }
static inline int scrollback_wifstopped(int status) { return WIFSTOPPED(status); }
int scrollback_sigrtmax(void);

#endif
