#include "heirloom.h"
#include <stdio.h>

int main(void) {
    heirloom_manager *m;
    heirloom_agent *a; /* one per worker thread */
    if (heirloom_manager_new(NULL, &m) != HEIRLOOM_OK) return 2; /* latched table, detect */
    if (heirloom_agent_new(m, &a) != HEIRLOOM_OK) return 2;
    heirloom_lock_id account = {HEIRLOOM_ROW, 0, /* table */ 1, /* key */ 42};
    for (int attempt = 0;; attempt++) {
        /* A restart keeps the transaction's age (wait-die, wound-wait),
         * backs off, and after max_restarts in a row runs alone. */
        if (attempt == 0) heirloom_begin(a); else heirloom_restart(a);
        int rc = heirloom_lock(a, &account, HEIRLOOM_X); /* IX on table and database first */
        if (rc == HEIRLOOM_OK) rc = heirloom_commit(a); /* ... update the row, then commit */
        else heirloom_abort(a);
        if (rc == HEIRLOOM_OK) break;
        fprintf(stderr, "%s: %s\n", heirloom_code_name(rc), heirloom_message(a));
        if (!heirloom_is_restartable(rc)) return 1;
    }
    heirloom_agent_free(a);
    heirloom_manager_free(m);
    puts("committed");
    return 0;
}
