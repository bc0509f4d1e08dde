#ifndef SCROLLBACK_CNCURSESW_SHIM_H
#define SCROLLBACK_CNCURSESW_SHIM_H

/* Without these, get_wch, cchar_t and waddnwstr are not declared. */
#ifndef _XOPEN_SOURCE_EXTENDED
#define _XOPEN_SOURCE_EXTENDED 1
#endif
#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif

#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>
#include <ncursesw/curses.h>

/* wcwidth is not declared by wchar.h under the feature macros Swift uses. */
extern int wcwidth(wchar_t c);

/* Globals that are not concurrency-safe in Swift 6 are read through these. */
static inline WINDOW *scrollback_stdscr(void) { return stdscr; }
static inline WINDOW *scrollback_curscr(void) { return curscr; }
static inline int scrollback_lines(void) { return LINES; }
static inline int scrollback_cols(void) { return COLS; }

/* Function-like macros do not import. */
static inline int scrollback_key_f(int n) { return KEY_F(n); }
static inline attr_t scrollback_a_bold(void) { return A_BOLD; }
static inline attr_t scrollback_a_reverse(void) { return A_REVERSE; }
static inline attr_t scrollback_a_underline(void) { return A_UNDERLINE; }
static inline attr_t scrollback_a_dim(void) { return A_DIM; }
static inline attr_t scrollback_color_pair(short n) { return COLOR_PAIR(n); }

/* Mouse wheel: buttons 4 and 5 are built with a function-like macro. */
static inline mmask_t scrollback_wheel_mask(void) { return BUTTON4_PRESSED | BUTTON5_PRESSED; }
/* The wheel, and clicks and double clicks of the first button (ncurses pairs presses and
   releases into clicks). Shift with the mouse still selects text in most terminals. */
static inline mmask_t scrollback_mouse_mask(void) {
    return BUTTON4_PRESSED | BUTTON5_PRESSED | BUTTON1_CLICKED | BUTTON1_DOUBLE_CLICKED;
}
static inline int scrollback_is_click(mmask_t state) { return (state & BUTTON1_CLICKED) != 0; }
static inline int scrollback_is_double_click(mmask_t state) { return (state & BUTTON1_DOUBLE_CLICKED) != 0; }
static inline int scrollback_is_wheel_up(mmask_t state) { return (state & BUTTON4_PRESSED) != 0; }
static inline int scrollback_is_wheel_down(mmask_t state) { return (state & BUTTON5_PRESSED) != 0; }

/* Draws a wide string at a position, then sets the attributes and colour pair of the
   cells it took (mvwchgat applies both reliably to wide characters). The caller passes
   text that fits, so nothing wraps. */
static inline int scrollback_draw(int row, int column, const wchar_t *text, int length, int cells, attr_t attributes, short pair) {
    WINDOW *window = stdscr;
    int result = mvwaddnwstr(window, row, column, text, length);
    if (cells > 0) mvwchgat(window, row, column, cells, attributes, pair, NULL);
    return result;
}

/* setupterm, cur_term and del_curterm are declared in term.h, whose macros would clash
   with Swift names. */
struct term;
extern int setupterm(const char *term, int filedes, int *errret);
extern struct term *cur_term;
extern int del_curterm(struct term *);

/* Checks the terminal description before anything is written: 1 when TERM names a
   terminal that can address the cursor, 0 when it is unknown (or there is no terminfo),
   2 when it is known but cannot run a full-screen program (TERM=dumb). Unlike initscr,
   which exits on error, this only answers. */
static inline int scrollback_check_terminal(const char *term) {
    int status = 0;
    if (setupterm(term, STDOUT_FILENO, &status) != OK) return 0;
    char *cup = tigetstr("cup");
    int usable = (cup == NULL || cup == (char *)-1) ? 2 : 1;
    /* The description was loaded only to be looked at: newterm loads its own. */
    if (cur_term != NULL) del_curterm(cur_term);
    return usable;
}

/* newterm rather than initscr: it returns NULL on an unusable terminal, where initscr
   prints "Error opening terminal" and exits. */
static inline SCREEN *scrollback_newterm(void) { return newterm(NULL, stdout, stdin); }

/* Writes a control sequence straight to the terminal (bracketed paste, for instance,
   which terminfo does not describe). */
static inline void scrollback_write_control(const char *sequence) {
    fflush(stdout);
    size_t length = strlen(sequence);
    while (length > 0) {
        ssize_t written = write(STDOUT_FILENO, sequence, length);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) return;
        sequence += written;
        length -= (size_t)written;
    }
}

#endif
