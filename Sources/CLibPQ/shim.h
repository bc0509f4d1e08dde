#ifndef SCROLLBACK_CLIBPQ_SHIM_H
#define SCROLLBACK_CLIBPQ_SHIM_H

#include <libpq-fe.h>

/* The diagnostic field codes are character macros, which do not import into Swift. */
static const int scrollback_pg_diag_sqlstate = PG_DIAG_SQLSTATE;
static const int scrollback_pg_diag_message_primary = PG_DIAG_MESSAGE_PRIMARY;

#endif
