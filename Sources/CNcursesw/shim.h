#ifndef SCROLLBACK_CNCURSESW_SHIM_H
#define SCROLLBACK_CNCURSESW_SHIM_H

/* Without these, get_wch, cchar_t and waddnwstr are not declared. */
#ifndef _XOPEN_SOURCE_EXTENDED
#define _XOPEN_SOURCE_EXTENDED 1
#endif
#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif

#include <locale.h>
#include <wchar.h>
#include <ncursesw/curses.h>

/* wcwidth is not declared by wchar.h under the feature macros Swift uses. */
extern int wcwidth(wchar_t c);

/* Globals that are not concurrency-safe in Swift 6 are read through these. */
static inline WINDOW *scrollback_stdscr(void) { return stdscr; }
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

#endif
