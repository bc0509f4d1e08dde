#include "TerminalSignalState.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t caught = 0;
static volatile sig_atomic_t stop_requested = 0;

static void handler(int signal) {
    if (signal == SIGTSTP) {
        stop_requested = 1;
    } else if (caught == 0) {
        caught = signal;
    }
}

int scrollback_catch_signal(int signal) {
    struct sigaction action;
    /* A signal the parent set to be ignored (nohup's SIGHUP, say) stays ignored. */
    if (sigaction(signal, NULL, &action) == 0 && action.sa_handler == SIG_IGN) return 0;
    memset(&action, 0, sizeof action);
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    return sigaction(signal, &action, NULL);
}

int scrollback_default_signal(int signal) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    return sigaction(signal, &action, NULL);
}

int scrollback_take_signal(void) {
    return caught;
}

int scrollback_take_stop_request(void) {
    int requested = stop_requested;
    stop_requested = 0;
    return requested;
}

int scrollback_sigrtmin(void) { return SIGRTMIN; }
int scrollback_sigrtmax(void) { return SIGRTMAX; }

void scrollback_forget_signal(int signal) {
    if (caught == signal) caught = 0;
}
