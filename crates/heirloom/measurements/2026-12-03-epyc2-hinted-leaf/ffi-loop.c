#include "heirloom.h"
#include <stdio.h>
#include <stdlib.h>
/* 16 row locks a transaction, half X, uniform over 2^20 rows, the latch-free
 * table, no-wait, no intention locks (as DBx1000 asks); and with intention
 * locks (argv[2] = 1). Counted: the function measured. */
static unsigned long long rng = 88172645463325252ULL;
static unsigned long long next(void) { rng ^= rng >> 12; rng ^= rng << 25; rng ^= rng >> 27; return rng * 2685821657736338717ULL; }
__attribute__((noinline)) void measured(heirloom_agent *a, long n) {
    for (long i = 0; i < n; i++) {
        heirloom_begin(a);
        for (int k = 0; k < 16; k++) {
            unsigned long long x = next();
            heirloom_lock_id id = {HEIRLOOM_ROW, 0, 1, (x >> 20) & ((1 << 20) - 1)};
            if (heirloom_lock(a, &id, (k & 1) ? HEIRLOOM_X : HEIRLOOM_S) != HEIRLOOM_OK) { heirloom_abort(a); goto next_txn; }
        }
        heirloom_commit(a);
    next_txn:;
    }
}
int main(int argc, char **argv) {
    heirloom_options o; heirloom_options_init(&o);
    o.table = HEIRLOOM_TABLE_LATCHFREE; o.policy = HEIRLOOM_POLICY_NOWAIT;
    o.intention_locks = argc > 2 ? atoi(argv[2]) : 0;
    heirloom_manager *m; heirloom_agent *a;
    if (heirloom_manager_new(&o, &m) || heirloom_agent_new(m, &a)) return 2;
    measured(a, 10000);
    measured(a, argc > 1 ? atol(argv[1]) : 100000);
    puts("done");
    return 0;
}
