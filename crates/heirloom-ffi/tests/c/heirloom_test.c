/*
 * The C interface from C: every call, misuse (null and freed handles, calls
 * out of order, a transaction used from another thread, a call after a
 * panic), a deadlock whose message names the cycle, and a multi-threaded
 * bank transfer whose money is conserved. Built and run by tests/c.rs;
 * exits non-zero with a message on the first failed check.
 */
#include "heirloom.h"
#include <unistd.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int checks;

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        checks++;                                                            \
        if (!(cond)) {                                                       \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, \
                    #cond);                                                  \
            fprintf(stderr, __VA_ARGS__);                                    \
            fprintf(stderr, "\n");                                           \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

#define OK(call) CHECK((call) == HEIRLOOM_OK, "%s", #call)

static heirloom_lock_id row(uint32_t table, uint64_t key) {
    heirloom_lock_id id = {HEIRLOOM_ROW, 0, table, key};
    return id;
}

static heirloom_lock_id table_lock(uint32_t table) {
    heirloom_lock_id id = {HEIRLOOM_TABLE, 0, table, 0};
    return id;
}

static heirloom_manager *new_manager_with(uint32_t table, uint32_t policy, uint32_t intention_locks) {
    heirloom_options o;
    heirloom_options_init(&o);
    o.table = table;
    o.policy = policy;
    o.partitions = 2;
    o.intention_locks = intention_locks;
    heirloom_manager *m = NULL;
    OK(heirloom_manager_new(&o, &m));
    CHECK(m != NULL, "no manager");
    return m;
}

static heirloom_manager *new_manager(uint32_t table, uint32_t policy) {
    return new_manager_with(table, policy, 1);
}

static heirloom_agent *new_agent(heirloom_manager *m) {
    heirloom_agent *a = NULL;
    OK(heirloom_agent_new(m, &a));
    CHECK(a != NULL, "no agent");
    return a;
}

static void each_call(void) {
    heirloom_manager *m = new_manager(HEIRLOOM_TABLE_LATCHED, HEIRLOOM_POLICY_DETECT);
    heirloom_agent *a = new_agent(m), *b = new_agent(m);
    heirloom_lock_id r1 = row(1, 1), r2 = row(1, 2), t1 = table_lock(1);

    OK(heirloom_begin(a));
    OK(heirloom_lock(a, &r1, HEIRLOOM_S));
    uint32_t mode = 99;
    OK(heirloom_held_mode(a, &r1, &mode));
    CHECK(mode == HEIRLOOM_S, "row held in %u", mode);
    OK(heirloom_held_mode(a, &t1, &mode));
    CHECK(mode == HEIRLOOM_IS, "intention lock on the table: %u", mode);
    OK(heirloom_held_mode(a, &r2, &mode));
    CHECK(mode == HEIRLOOM_NL, "a lock never taken: %u", mode);
    uint64_t id = 0;
    OK(heirloom_txn_id(a, &id));
    CHECK(id != 0, "transaction id");
    OK(heirloom_publish_id(a));

    /* b: no-wait, skip and timeout against a's S, then a conversion. */
    OK(heirloom_begin(b));
    CHECK(heirloom_lock_with(b, &r1, HEIRLOOM_X, HEIRLOOM_WAIT_SKIP, 0) == HEIRLOOM_BUSY, "skip");
    CHECK(heirloom_wait_for_txn(b, id, HEIRLOOM_WAIT_SKIP, 0) == HEIRLOOM_BUSY, "a runs");
    CHECK(heirloom_lock_with(b, &r1, HEIRLOOM_X, HEIRLOOM_WAIT_TIMEOUT, 2000) == HEIRLOOM_ETIMEOUT, "timeout");
    CHECK(strstr(heirloom_message(b), "timeout") != NULL || strstr(heirloom_message(b), "time") != NULL,
          "message: %s", heirloom_message(b));
    CHECK(heirloom_is_restartable(HEIRLOOM_ETIMEOUT), "timeout restartable");
    CHECK(heirloom_commit(b) == HEIRLOOM_EDOOMED, "a doomed transaction does not commit: %s",
          heirloom_message(b));
    OK(heirloom_begin(b));
    CHECK(heirloom_lock_with(b, &r1, HEIRLOOM_X, HEIRLOOM_WAIT_NOWAIT, 0) == HEIRLOOM_EWOULDBLOCK, "no-wait");
    /* The refusal's message is formatted when asked, and stays the same
     * string until the next call on b. */
    const char *refused = heirloom_message(b);
    CHECK(strstr(refused, "would block") != NULL, "no-wait message: %s", refused);
    CHECK(heirloom_message(b) == refused, "the message moved between two asks");
    OK(heirloom_abort(b));
    CHECK(strlen(heirloom_message(b)) == 0, "message after a success: %s", heirloom_message(b));

    /* Early release, a batch, and the JSON views. */
    OK(heirloom_lock(a, &r2, HEIRLOOM_X));
    OK(heirloom_unlock(a, &r2));
    CHECK(heirloom_unlock(a, &r2) == HEIRLOOM_ENOTHELD, "second unlock: %s", heirloom_message(a));
    heirloom_lock_id batch[3] = {row(2, 5), row(2, 3), row(3, 9)};
    uint32_t modes[3] = {HEIRLOOM_X, HEIRLOOM_S, HEIRLOOM_U};
    OK(heirloom_lock_all(a, batch, modes, 3));
    OK(heirloom_held_mode(a, &batch[2], &mode));
    CHECK(mode == HEIRLOOM_U, "batch mode %u", mode);
    char *snap = heirloom_manager_snapshot_json(m);
    CHECK(snap != NULL && strstr(snap, "\"locks\"") && strstr(snap, "\"holders\""), "snapshot %s", snap);
    heirloom_string_free(snap);
    OK(heirloom_commit(a));
    snap = heirloom_manager_snapshot_json(m);
    CHECK(snap != NULL && strcmp(snap, "{\"locks\":[]}") == 0, "locks left behind: %s", snap);
    heirloom_string_free(snap);
    char *stats = heirloom_manager_stats_json(m);
    CHECK(stats != NULL && strstr(stats, "\"committed\":1"), "stats %s", stats);
    heirloom_string_free(stats);
    stats = heirloom_agent_stats_json(a);
    CHECK(stats != NULL && strstr(stats, "\"committed\":1"), "agent stats %s", stats);
    heirloom_string_free(stats);
    heirloom_string_free(NULL);

    CHECK(strcmp(heirloom_code_name(HEIRLOOM_EDEADLOCK), "deadlock") == 0, "code name");
    CHECK(strcmp(heirloom_code_name(12345), "unknown") == 0, "unknown code name");
    CHECK(!heirloom_is_restartable(HEIRLOOM_EINVAL), "invalid is not restartable");

    OK(heirloom_agent_free(a));
    OK(heirloom_agent_free(b));
    heirloom_manager_free(m);
}

static void misuse(void) {
    heirloom_lock_id r = row(1, 1);
    heirloom_manager *m = NULL;
    heirloom_agent *a = NULL;
    uint32_t mode;

    /* Null handles and pointers, options out of range. */
    CHECK(heirloom_manager_new(NULL, NULL) == HEIRLOOM_EINVAL, "null out");
    heirloom_options o;
    heirloom_options_init(&o);
    o.table = 77;
    CHECK(heirloom_manager_new(&o, &m) == HEIRLOOM_EINVAL && m == NULL, "bad table");
    heirloom_options_init(&o);
    o.table = HEIRLOOM_TABLE_SERVER;
    o.partitions = 0;
    CHECK(heirloom_manager_new(&o, &m) == HEIRLOOM_EINVAL, "zero partitions");
    heirloom_options_init(&o);
    CHECK(o.buckets == 0, "default buckets %llu", (unsigned long long)o.buckets);
    o.buckets = (1ull << 24) + 1;
    CHECK(heirloom_manager_new(&o, &m) == HEIRLOOM_EINVAL && m == NULL, "buckets beyond 2^24");
    o.buckets = 0; /* the table kind's own */
    o.table = HEIRLOOM_TABLE_LATCHFREE;
    CHECK(heirloom_manager_new(&o, &m) == HEIRLOOM_OK && m != NULL, "zero buckets: the kind's default");
    heirloom_manager_free(m);
    m = NULL;
    heirloom_options_init(&o);
    o.intention_locks = 2;
    CHECK(heirloom_manager_new(&o, &m) == HEIRLOOM_EINVAL, "intention_locks 2");
    heirloom_options_init(&o);
    o.intention_locks = 0;
    o.escalate_after = 100;
    CHECK(heirloom_manager_new(&o, &m) == HEIRLOOM_EINVAL && m == NULL, "escalation without intention locks");
    CHECK(heirloom_agent_new(NULL, &a) == HEIRLOOM_EINVAL, "null manager");
    CHECK(heirloom_begin(NULL) == HEIRLOOM_EINVAL, "null agent");
    CHECK(heirloom_lock(NULL, &r, HEIRLOOM_S) == HEIRLOOM_EINVAL, "null agent lock");
    CHECK(heirloom_manager_stats_json(NULL) == NULL, "null manager stats");
    CHECK(strlen(heirloom_message(NULL)) > 0, "message of null");
    heirloom_manager_free(NULL);

    OK(heirloom_manager_new(NULL, &m)); /* the defaults */
    a = new_agent(m);
    /* Out of order. */
    CHECK(heirloom_lock(a, &r, HEIRLOOM_S) == HEIRLOOM_EMISUSE, "lock before begin");
    CHECK(strstr(heirloom_message(a), "no transaction") != NULL, "message: %s", heirloom_message(a));
    CHECK(heirloom_commit(a) == HEIRLOOM_EMISUSE, "commit before begin");
    CHECK(heirloom_abort(a) == HEIRLOOM_EMISUSE, "abort before begin");
    OK(heirloom_begin(a));
    CHECK(heirloom_begin(a) == HEIRLOOM_EMISUSE, "second begin");
    /* Bad arguments change nothing. */
    CHECK(heirloom_lock(a, NULL, HEIRLOOM_S) == HEIRLOOM_EINVAL, "null id");
    CHECK(heirloom_lock(a, &r, 42) == HEIRLOOM_EINVAL, "bad mode");
    CHECK(heirloom_lock(a, &r, HEIRLOOM_NL) == HEIRLOOM_EINVAL, "NL is no request");
    heirloom_lock_id bad = {9, 0, 1, 1};
    CHECK(heirloom_lock(a, &bad, HEIRLOOM_S) == HEIRLOOM_EINVAL, "bad level");
    CHECK(heirloom_lock_with(a, &r, HEIRLOOM_S, 9, 0) == HEIRLOOM_EINVAL, "bad wait");
    CHECK(heirloom_lock_all(a, NULL, NULL, 2) == HEIRLOOM_EINVAL, "null batch");
    CHECK(heirloom_held_mode(a, &r, NULL) == HEIRLOOM_EINVAL, "null out");
    CHECK(strstr(heirloom_message(a), "null out pointer") != NULL, "held_mode's message: %s", heirloom_message(a));
    CHECK(heirloom_held_mode(a, NULL, &mode) == HEIRLOOM_EINVAL, "null id");
    CHECK(strstr(heirloom_message(a), "lock id") != NULL, "held_mode's message: %s", heirloom_message(a));
    uint64_t txn_id;
    CHECK(heirloom_txn_id(a, NULL) == HEIRLOOM_EINVAL, "null out");
    CHECK(strstr(heirloom_message(a), "null out pointer") != NULL, "txn_id's message: %s", heirloom_message(a));
    CHECK(heirloom_wait_for_txn(a, 1, 9, 0) == HEIRLOOM_EINVAL, "bad wait");
    CHECK(strstr(heirloom_message(a), "invalid wait 9") != NULL, "wait_for_txn's message: %s", heirloom_message(a));
    OK(heirloom_txn_id(a, &txn_id));
    OK(heirloom_lock(a, &r, HEIRLOOM_S));
    OK(heirloom_held_mode(a, &r, &mode));
    CHECK(mode == HEIRLOOM_S, "the transaction goes on after refused calls");
    OK(heirloom_commit(a));

    /* A freed agent is refused, and freeing it again too. */
    OK(heirloom_agent_free(a));
    CHECK(heirloom_begin(a) == HEIRLOOM_EINVAL, "freed agent");
    CHECK(heirloom_agent_free(a) == HEIRLOOM_EINVAL, "double free");
    CHECK(strlen(heirloom_message(a)) > 0, "message of a freed agent");
    /* A freed manager too; its agents stay usable. */
    heirloom_agent *b = new_agent(m);
    heirloom_manager_free(m);
    CHECK(heirloom_agent_new(m, &a) == HEIRLOOM_EINVAL, "freed manager");
    CHECK(heirloom_manager_snapshot_json(m) == NULL, "freed manager snapshot");
    heirloom_manager_free(m);
    OK(heirloom_begin(b));
    OK(heirloom_lock(b, &r, HEIRLOOM_X));
    OK(heirloom_commit(b));
    OK(heirloom_agent_free(b));
}

/* A transaction moves between threads between calls (a thread pool). */
struct mover {
    heirloom_manager *m;
    heirloom_agent *a;
    pthread_barrier_t *moved;
    int code[2];
};

/* Returns once the snapshot of `m` shows a waiter (20 s at most). */
static void until_someone_waits(heirloom_manager *m) {
    for (int i = 0; i < 20000; i++) {
        char *snap = heirloom_manager_snapshot_json(m);
        int waiting = snap && strstr(snap, "\"waiters\":[{") != NULL;
        heirloom_string_free(snap);
        if (waiting) return;
        usleep(1000);
    }
}

/* Takes row 7 in X through an agent whose transaction another thread
 * began, says so, waits until somebody waits for the row, and commits. */
static void *move_here(void *arg) {
    struct mover *mv = arg;
    heirloom_lock_id r = row(1, 7);
    mv->code[0] = heirloom_lock(mv->a, &r, HEIRLOOM_X);
    pthread_barrier_wait(mv->moved);
    until_someone_waits(mv->m);
    mv->code[1] = heirloom_commit(mv->a);
    return NULL;
}

/* `a` holds `r` in X, its binding on this thread: B's request for S on
 * this thread is refused (a wait for this thread's own); both end. */
static void own_wait_is_refused(heirloom_agent *a, heirloom_agent *b, const heirloom_lock_id *r) {
    OK(heirloom_begin(b));
    CHECK(heirloom_lock(b, r, HEIRLOOM_S) == HEIRLOOM_EMISUSE, "a wait for this thread's own: %s",
          heirloom_message(b));
    OK(heirloom_abort(b));
    OK(heirloom_commit(a));
}

static void another_thread(void) {
    heirloom_manager *m = new_manager(HEIRLOOM_TABLE_LATCHFREE, HEIRLOOM_POLICY_DETECT);
    heirloom_agent *a = new_agent(m), *b = new_agent(m);
    heirloom_lock_id r0 = row(1, 6), r = row(1, 7);
    pthread_barrier_t moved;
    pthread_barrier_init(&moved, NULL, 2);
    OK(heirloom_begin(a));
    OK(heirloom_lock(a, &r0, HEIRLOOM_S));
    struct mover mv = {m, a, &moved, {-1, -1}};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, move_here, &mv) == 0, "thread");
    pthread_barrier_wait(&moved);
    /* A's transaction is the other thread's now: B, on this thread, may
     * wait for it (it is not refused as a wait on this thread's own). */
    OK(heirloom_begin(b));
    OK(heirloom_lock(b, &r, HEIRLOOM_S));
    pthread_join(t, NULL);
    CHECK(mv.code[0] == HEIRLOOM_OK && mv.code[1] == HEIRLOOM_OK, "codes %d %d", mv.code[0], mv.code[1]);
    OK(heirloom_commit(b));
    /* And back: begun there, it ends here; its binding follows it, so a
     * wait here for it is refused again. */
    OK(heirloom_begin(a));
    OK(heirloom_lock(a, &r, HEIRLOOM_X));
    own_wait_is_refused(a, b, &r);
    pthread_barrier_destroy(&moved);
    OK(heirloom_agent_free(a));
    OK(heirloom_agent_free(b));
    heirloom_manager_free(m);
}

/* Commits `arg`'s agent once somebody waits for a lock (20 s at most). */
static void *commit_when_waited(void *arg) {
    struct mover *mv = arg;
    until_someone_waits(mv->m);
    mv->code[0] = heirloom_commit(mv->a);
    return NULL;
}

/* A holds `r` in X and puts its session down; another thread commits it
 * once somebody waits, and B's S request here waits for that commit. */
static void wait_for_a_commit_elsewhere(heirloom_manager *m, heirloom_agent *a, heirloom_agent *b,
                                        const heirloom_lock_id *r, const char *what) {
    OK(heirloom_begin(a));
    OK(heirloom_lock(a, r, HEIRLOOM_X));
    OK(heirloom_agent_unbind(a));
    struct mover mv = {m, a, NULL, {-1, -1}};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, commit_when_waited, &mv) == 0, "thread");
    OK(heirloom_begin(b));
    OK(heirloom_lock(b, r, HEIRLOOM_S));
    pthread_join(t, NULL);
    CHECK(mv.code[0] == HEIRLOOM_OK, "%s: the other thread's commit: %d", what, mv.code[0]);
    OK(heirloom_commit(b));
}

/* A thread pool's worker puts a session down between statements
 * (heirloom_agent_unbind): the session's next call may come from any
 * worker, so this thread may wait for its transaction, and the wait ends
 * when another worker commits it. The session's next call binds it again,
 * on whatever thread makes it. */
static void a_worker_puts_a_session_down(uint32_t table) {
    heirloom_manager *m = new_manager(table, HEIRLOOM_POLICY_DETECT);
    heirloom_agent *a = new_agent(m), *b = new_agent(m);
    heirloom_lock_id r = row(1, 8);
    wait_for_a_commit_elsewhere(m, a, b, &r, "a session put down");
    /* Put down and taken up again on this same thread: bound here again. */
    OK(heirloom_begin(a));
    OK(heirloom_agent_unbind(a));
    OK(heirloom_lock(a, &r, HEIRLOOM_X));
    own_wait_is_refused(a, b, &r);
    /* Without a transaction, and on a freed handle. */
    OK(heirloom_agent_unbind(a));
    OK(heirloom_agent_free(a));
    CHECK(heirloom_agent_unbind(a) == HEIRLOOM_EINVAL, "a freed handle");
    CHECK(heirloom_agent_unbind(NULL) == HEIRLOOM_EINVAL, "null");
    OK(heirloom_agent_free(b));
    heirloom_manager_free(m);
}

/* A panic inside the library: the call returns HEIRLOOM_EPANIC, the locks
 * go back, the agent stays unusable. */
static void after_a_panic(void) {
    heirloom_manager *m = new_manager(HEIRLOOM_TABLE_LATCHED, HEIRLOOM_POLICY_NOWAIT);
    heirloom_agent *a = new_agent(m), *b = new_agent(m);
    heirloom_lock_id r = row(4, 4);
    OK(heirloom_begin(a));
    OK(heirloom_lock(a, &r, HEIRLOOM_X));
    OK(heirloom_agent_inject_panic(a));
    CHECK(heirloom_lock(a, &r, HEIRLOOM_X) == HEIRLOOM_EPANIC, "the injected panic");
    /* The message says what the panic said and where; nothing is printed
     * (tests/c.rs checks this program's stderr). */
    CHECK(strstr(heirloom_message(a), "panic injected by heirloom_agent_inject_panic") != NULL &&
              strstr(heirloom_message(a), ".rs:") != NULL,
          "message: %s", heirloom_message(a));
    CHECK(heirloom_begin(a) == HEIRLOOM_EPANIC, "unusable after a panic");
    CHECK(heirloom_commit(a) == HEIRLOOM_EPANIC, "unusable after a panic");
    OK(heirloom_begin(b));
    OK(heirloom_lock(b, &r, HEIRLOOM_X)); /* a's X went back (no-wait would refuse) */
    OK(heirloom_commit(b));
    OK(heirloom_agent_free(a));
    OK(heirloom_agent_free(b));
    heirloom_manager_free(m);
}

/* Two transactions, each holding one row and asking for the other's. */
struct duel {
    heirloom_agent *agent;
    uint64_t first, second;
    pthread_barrier_t *barrier;
    int code;
    char message[512];
};

static void *duel(void *arg) {
    struct duel *d = arg;
    heirloom_lock_id r1 = row(5, d->first), r2 = row(5, d->second);
    OK(heirloom_begin(d->agent));
    OK(heirloom_lock(d->agent, &r1, HEIRLOOM_X));
    pthread_barrier_wait(d->barrier);
    d->code = heirloom_lock(d->agent, &r2, HEIRLOOM_X);
    snprintf(d->message, sizeof d->message, "%s", heirloom_message(d->agent));
    if (d->code == HEIRLOOM_OK)
        OK(heirloom_commit(d->agent));
    else
        OK(heirloom_abort(d->agent));
    return NULL;
}

static void a_deadlock(void) {
    heirloom_manager *m = new_manager(HEIRLOOM_TABLE_LATCHED, HEIRLOOM_POLICY_DETECT);
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, 2);
    struct duel d[2] = {{new_agent(m), 1, 2, &barrier, -1, ""}, {new_agent(m), 2, 1, &barrier, -1, ""}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++) CHECK(pthread_create(&t[i], NULL, duel, &d[i]) == 0, "thread");
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    int victims = (d[0].code == HEIRLOOM_EDEADLOCK) + (d[1].code == HEIRLOOM_EDEADLOCK);
    int winners = (d[0].code == HEIRLOOM_OK) + (d[1].code == HEIRLOOM_OK);
    CHECK(victims == 1 && winners == 1, "codes %d %d", d[0].code, d[1].code);
    const char *msg = d[0].code == HEIRLOOM_EDEADLOCK ? d[0].message : d[1].message;
    CHECK(strstr(msg, "deadlock") && strstr(msg, "-[") && strstr(msg, "]->"), "the cycle: %s", msg);
    for (int i = 0; i < 2; i++) OK(heirloom_agent_free(d[i].agent));
    pthread_barrier_destroy(&barrier);
    heirloom_manager_free(m);
}

/* Bank transfers: money moves between accounts under X row locks taken in
 * random order (so transactions deadlock, die or are wounded and retry);
 * the total never changes. */
#define ACCOUNTS 16
#define THREADS 8
#define TRANSFERS 2000

static long balance[ACCOUNTS];

struct teller {
    heirloom_manager *m;
    unsigned seed;
    long retries;
};

static void *teller(void *arg) {
    struct teller *t = arg;
    heirloom_agent *a = new_agent(t->m);
    for (int i = 0; i < TRANSFERS; i++) {
        uint64_t from = rand_r(&t->seed) % ACCOUNTS, to = rand_r(&t->seed) % ACCOUNTS;
        long amount = rand_r(&t->seed) % 100;
        for (int attempt = 0;; attempt++) {
            /* heirloom_restart: the age kept, a backoff, and exclusive
             * mode after max_restarts restarts in a row. (Retrying at once
             * with heirloom_begin, 8 threads on 16 accounts under no-wait
             * made 2,113 commits in 120 s against 590 million retries.) */
            if (attempt == 0) OK(heirloom_begin(a)); else OK(heirloom_restart(a));
            heirloom_lock_id f = row(9, from), d = row(9, to);
            int code = heirloom_lock(a, &f, HEIRLOOM_X);
            if (code == HEIRLOOM_OK) code = heirloom_lock(a, &d, HEIRLOOM_X);
            if (code == HEIRLOOM_OK) {
                balance[from] -= amount;
                balance[to] += amount;
                OK(heirloom_commit(a));
                break;
            }
            CHECK(heirloom_is_restartable(code), "code %d: %s", code, heirloom_message(a));
            OK(heirloom_abort(a));
            t->retries++;
        }
    }
    OK(heirloom_agent_free(a));
    return NULL;
}

static void bank(uint32_t table, uint32_t policy) {
    heirloom_manager *m = new_manager(table, policy);
    for (int i = 0; i < ACCOUNTS; i++) balance[i] = 1000;
    struct teller tellers[THREADS];
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++) {
        tellers[i] = (struct teller){m, 17u * (unsigned)i + 1, 0};
        CHECK(pthread_create(&threads[i], NULL, teller, &tellers[i]) == 0, "thread");
    }
    for (int i = 0; i < THREADS; i++) pthread_join(threads[i], NULL);
    long total = 0;
    for (int i = 0; i < ACCOUNTS; i++) total += balance[i];
    CHECK(total == 1000L * ACCOUNTS, "money was made or lost: %ld", total);
    char *snap = heirloom_manager_snapshot_json(m);
    CHECK(snap && strcmp(snap, "{\"locks\":[]}") == 0, "locks left behind: %s", snap);
    heirloom_string_free(snap);
    char *stats = heirloom_manager_stats_json(m);
    char want[64];
    snprintf(want, sizeof want, "\"committed\":%d", THREADS * TRANSFERS);
    CHECK(stats && strstr(stats, want), "every transfer committed once: %s", stats);
    heirloom_string_free(stats);
    heirloom_manager_free(m);
}

/* intention_locks = 0: a row lock is the only lock taken, a table lock
 * stands alone beside it, and row locks still conflict with each other. */
static void without_intention_locks(uint32_t table) {
    heirloom_manager *m = new_manager_with(table, HEIRLOOM_POLICY_NOWAIT, 0);
    heirloom_agent *a = new_agent(m), *b = new_agent(m);
    heirloom_lock_id r1 = row(1, 1), t1 = table_lock(1);
    uint32_t mode = 99;

    OK(heirloom_begin(a));
    OK(heirloom_lock(a, &r1, HEIRLOOM_S));
    OK(heirloom_held_mode(a, &t1, &mode));
    CHECK(mode == HEIRLOOM_NL, "no intention lock on the table: %u", mode);
    char *snap = heirloom_manager_snapshot_json(m);
    int locks = 0;
    for (const char *p = snap; p && (p = strstr(p, "\"lock\"")) != NULL; p++) locks++;
    CHECK(locks == 1 && strstr(snap, "\"db0.t1.r1\""), "the row alone: %s", snap);
    heirloom_string_free(snap);
    OK(heirloom_begin(b));
    OK(heirloom_lock(b, &t1, HEIRLOOM_X)); /* stands alone: no conflict with the row */
    CHECK(heirloom_lock(b, &r1, HEIRLOOM_X) == HEIRLOOM_EWOULDBLOCK, "row X against row S: %s",
          heirloom_message(b));
    OK(heirloom_abort(b));
    OK(heirloom_commit(a));
    snap = heirloom_manager_snapshot_json(m);
    CHECK(snap && strcmp(snap, "{\"locks\":[]}") == 0, "locks left behind: %s", snap);
    heirloom_string_free(snap);
    OK(heirloom_agent_free(a));
    OK(heirloom_agent_free(b));
    heirloom_manager_free(m);
}

/* fast_rows: an S row lock is a fast hold (counted in "fast_ops") with 1
 * and with the default 2 (auto, which starts on), and goes through the
 * table with 0; 3 is refused. */
static void fast_rows_option(uint32_t table) {
    heirloom_options o;
    for (uint32_t on = 0; on < 3; on++) {
        heirloom_options_init(&o);
        CHECK(o.fast_rows == 2, "fast_rows defaults to 2: %u", o.fast_rows);
        o.table = table;
        o.intention_locks = 0; /* the row alone */
        o.fast_rows = on;
        heirloom_manager *m = NULL;
        OK(heirloom_manager_new(&o, &m));
        heirloom_agent *a = new_agent(m);
        heirloom_lock_id r1 = row(1, 1);
        OK(heirloom_begin(a));
        OK(heirloom_lock(a, &r1, HEIRLOOM_S));
        OK(heirloom_commit(a));
        char *stats = heirloom_manager_stats_json(m);
        /* The lock and its release, on the fast path or on the table. */
        int none_fast = stats && strstr(stats, "\"fast_ops\":0,") != NULL;
        CHECK(stats && none_fast == !on, "fast_rows %u: %s", on, stats);
        heirloom_string_free(stats);
        OK(heirloom_agent_free(a));
        heirloom_manager_free(m);
    }
    heirloom_options_init(&o);
    o.fast_rows = 3;
    heirloom_manager *m = NULL;
    CHECK(heirloom_manager_new(&o, &m) == HEIRLOOM_EINVAL && m == NULL, "fast_rows 3");
}

/* HEIRLOOM_TABLE_NONE: every call succeeds and nothing is held, so two
 * transactions take X on one row at once; both commit, and are counted. */
static void no_lock_table(void) {
    heirloom_manager *m = new_manager(HEIRLOOM_TABLE_NONE, HEIRLOOM_POLICY_NOWAIT);
    heirloom_agent *a = new_agent(m), *b = new_agent(m);
    heirloom_lock_id r1 = row(1, 1), t1 = table_lock(1);
    uint32_t mode = 99;

    OK(heirloom_begin(a));
    OK(heirloom_begin(b));
    OK(heirloom_lock(a, &r1, HEIRLOOM_X));
    OK(heirloom_lock(b, &r1, HEIRLOOM_X)); /* no conflict: nothing was taken */
    OK(heirloom_lock_with(b, &t1, HEIRLOOM_X, HEIRLOOM_WAIT_NOWAIT, 0));
    OK(heirloom_held_mode(a, &r1, &mode));
    CHECK(mode == HEIRLOOM_NL, "nothing held: %u", mode);
    char *snap = heirloom_manager_snapshot_json(m);
    CHECK(snap && strcmp(snap, "{\"locks\":[]}") == 0, "an empty table: %s", snap);
    heirloom_string_free(snap);
    OK(heirloom_unlock(a, &r1));
    OK(heirloom_commit(a));
    OK(heirloom_commit(b));
    char *stats = heirloom_manager_stats_json(m);
    CHECK(stats && strstr(stats, "\"committed\":2"), "both committed: %s", stats);
    heirloom_string_free(stats);
    OK(heirloom_agent_free(a));
    OK(heirloom_agent_free(b));
    heirloom_manager_free(m);
}

/* A retry keeps its age under wait-die: B, aborted and retried, is still
 * older than D, which began after B's first attempt, so D dies against it
 * (with heirloom_begin B would be the younger one and D would wait). */
static void a_retry_keeps_its_age(void) {
    heirloom_manager *m = new_manager(HEIRLOOM_TABLE_LATCHED, HEIRLOOM_POLICY_WAITDIE);
    heirloom_agent *b = new_agent(m), *d = new_agent(m);
    heirloom_lock_id r1 = row(1, 1);
    uint64_t first = 0, again = 0, young = 0, fresh = 0;

    CHECK(heirloom_txn_age(b, &first) == HEIRLOOM_EMISUSE, "no age without a transaction");
    OK(heirloom_retry(b)); /* the agent's first: a new age */
    OK(heirloom_txn_age(b, &first));
    CHECK(first > 0, "a wait-die age: %llu", (unsigned long long)first);
    OK(heirloom_lock(b, &r1, HEIRLOOM_X));
    CHECK(heirloom_retry(b) == HEIRLOOM_EMISUSE, "retry with a transaction open");
    OK(heirloom_begin(d));
    OK(heirloom_txn_age(d, &young));
    CHECK(young > first, "D is younger: %llu after %llu", (unsigned long long)young, (unsigned long long)first);
    OK(heirloom_abort(b));
    OK(heirloom_retry(b));
    OK(heirloom_txn_age(b, &again));
    CHECK(again == first, "the retry's age %llu, the first attempt's %llu", (unsigned long long)again,
          (unsigned long long)first);
    OK(heirloom_lock(b, &r1, HEIRLOOM_X));
    CHECK(heirloom_lock(d, &r1, HEIRLOOM_S) == HEIRLOOM_EDIED, "the younger D dies: %s", heirloom_message(d));
    OK(heirloom_abort(d));
    OK(heirloom_commit(b));
    OK(heirloom_begin(b)); /* new work: a new age */
    OK(heirloom_txn_age(b, &fresh));
    CHECK(fresh > young, "new work is younger than D: %llu", (unsigned long long)fresh);
    OK(heirloom_commit(b));
    CHECK(heirloom_txn_age(b, NULL) == HEIRLOOM_EINVAL && strlen(heirloom_message(b)) > 0,
          "a null out pointer, with a message");
    char *stats = heirloom_manager_stats_json(m);
    CHECK(stats && strstr(stats, "\"restarts\":2"), "two retries counted: %s", stats);
    heirloom_string_free(stats);
    OK(heirloom_agent_free(b));
    OK(heirloom_agent_free(d));
    heirloom_manager_free(m);
}

/* heirloom_restart restarts as Rust's Agent::run does: the age kept, and
 * after max_restarts restarts in a row the transaction runs alone. */
static void a_restart_goes_exclusive(void) {
    heirloom_options o;
    heirloom_options_init(&o);
    CHECK(o.max_restarts == 10 && o.restart_backoff == 1, "defaults: %u, %u", o.max_restarts, o.restart_backoff);
    o.policy = HEIRLOOM_POLICY_WAITDIE;
    o.max_restarts = 2;
    heirloom_manager *m = NULL;
    OK(heirloom_manager_new(&o, &m));
    heirloom_agent *a = new_agent(m), *b = new_agent(m);
    heirloom_lock_id r = row(8, 1);
    uint64_t age = 0, again = 0;
    OK(heirloom_begin(a));
    OK(heirloom_lock(a, &r, HEIRLOOM_X));
    {
        /* The id's integer and its `T<agent>.<seq>` in snapshots (the header). */
        uint64_t id = 0;
        char name[64];
        OK(heirloom_txn_id(a, &id));
        snprintf(name, sizeof name, "\"T%llu.%llu\"", (unsigned long long)((id >> 40) - 1),
                 (unsigned long long)(id & ((1ull << 40) - 1)));
        char *snap = heirloom_manager_snapshot_json(m);
        CHECK(snap && strstr(snap, name), "%s in %s", name, snap);
        heirloom_string_free(snap);
    }
    OK(heirloom_begin(b));
    OK(heirloom_txn_age(b, &age));
    CHECK(heirloom_lock(b, &r, HEIRLOOM_S) == HEIRLOOM_EDIED, "the younger dies: %s", heirloom_message(b));
    OK(heirloom_abort(b));
    OK(heirloom_restart(b)); /* the first restart: not exclusive */
    OK(heirloom_txn_age(b, &again));
    CHECK(again == age, "the restart keeps the age: %llu, %llu", (unsigned long long)again, (unsigned long long)age);
    CHECK(heirloom_lock(b, &r, HEIRLOOM_S) == HEIRLOOM_EDIED, "dies again: %s", heirloom_message(b));
    OK(heirloom_abort(b));
    /* The second restart in a row runs alone: it waits for every other
     * transaction, so A (on this same thread) ends first. */
    OK(heirloom_commit(a));
    OK(heirloom_restart(b));
    OK(heirloom_lock(b, &r, HEIRLOOM_S));
    OK(heirloom_commit(b));
    char *stats = heirloom_agent_stats_json(b);
    CHECK(stats && strstr(stats, "\"restarts\":2") && strstr(stats, "\"exclusive_runs\":1"),
          "two restarts, the second exclusive: %s", stats);
    heirloom_string_free(stats);
    /* The gate is open again, and heirloom_begin starts the count again. */
    OK(heirloom_begin(a));
    OK(heirloom_commit(a));
    OK(heirloom_begin(b));
    OK(heirloom_abort(b));
    OK(heirloom_restart(b));
    OK(heirloom_commit(b));
    stats = heirloom_agent_stats_json(b);
    CHECK(stats && strstr(stats, "\"exclusive_runs\":1"), "a first restart again: %s", stats);
    heirloom_string_free(stats);
    o.restart_backoff = 2;
    heirloom_manager *bad = NULL;
    CHECK(heirloom_manager_new(&o, &bad) == HEIRLOOM_EINVAL && bad == NULL, "restart_backoff 2 refused");
    OK(heirloom_agent_free(a));
    OK(heirloom_agent_free(b));
    heirloom_manager_free(m);
}

/* A manager built from `o` whose two agents meet on `r`: one waits while
 * the other commits on another thread (wait_for_a_commit_elsewhere). */
static void a_wait_under(const heirloom_options *o, heirloom_lock_id r, const char *what) {
    heirloom_manager *m = NULL;
    OK(heirloom_manager_new(o, &m));
    heirloom_agent *a = new_agent(m), *b = new_agent(m);
    wait_for_a_commit_elsewhere(m, a, b, &r, what);
    OK(heirloom_agent_free(a));
    OK(heirloom_agent_free(b));
    heirloom_manager_free(m);
}

/* The spin before a park: the library's bound by default, 0 (park at
 * once) and the largest bound accepted, a wait ending under each when its
 * holder commits on another thread; one microsecond past the largest is
 * refused. */
static void the_spin_before_a_park(void) {
    heirloom_options o;
    heirloom_options_init(&o);
    CHECK(o.spin_before_park_us > 0, "a spin by default: %llu", (unsigned long long)o.spin_before_park_us);
    const uint64_t spins[3] = {o.spin_before_park_us, 0, 1000000};
    for (int i = 0; i < 3; i++) {
        o.policy = HEIRLOOM_POLICY_DETECT;
        o.spin_before_park_us = spins[i];
        char what[48];
        snprintf(what, sizeof what, "spin %llu", (unsigned long long)spins[i]);
        a_wait_under(&o, row(9, 1), what);
    }
    o.spin_before_park_us = 1000001;
    heirloom_manager *bad = NULL;
    CHECK(heirloom_manager_new(&o, &bad) == HEIRLOOM_EINVAL && bad == NULL, "a spin over a second refused");
}

/* The cores the threads run on: 0 (the machine's) by default; a manager
 * told of one core (its two agents outnumber it: the waiter parks at once)
 * and of 64 (they fit: it may spin) each sees a wait end when the holder
 * commits on another thread. */
static void the_cores_told(void) {
    heirloom_options o;
    heirloom_options_init(&o);
    CHECK(o.cores == 0, "the machine's cores by default: %u", o.cores);
    const uint32_t cores[2] = {1, 64};
    for (int i = 0; i < 2; i++) {
        o.table = HEIRLOOM_TABLE_LATCHFREE;
        o.cores = cores[i];
        char what[48];
        snprintf(what, sizeof what, "cores %u", cores[i]);
        a_wait_under(&o, row(9, 2), what);
    }
}

static double seconds_since(const struct timespec *t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Many X row locks in one transaction, then its commit, on every table
 * kind: linear time (a table of fixed size made it quadratic: 300,000
 * locks took 25.8 s on the latched table). The count is
 * HEIRLOOM_TEST_LOCKS (tests/c.rs: 1,000,000 in release builds, fewer in
 * debug ones); the bound is generous, the times are printed. Every kind
 * runs with its defaults: the latched table grows, the latch-free tables
 * (CAS and swap append) split their lists. */
static void many_locks_in_one_transaction(void) {
    const char *env = getenv("HEIRLOOM_TEST_LOCKS");
    long n = env ? atol(env) : 1000000;
    uint32_t tables[] = {HEIRLOOM_TABLE_LATCHED, HEIRLOOM_TABLE_LATCHFREE, HEIRLOOM_TABLE_LATCHFREE_SWAP,
                         HEIRLOOM_TABLE_SERVER, HEIRLOOM_TABLE_GLOBAL};
    for (int i = 0; i < 5; i++) {
        heirloom_options o;
        heirloom_options_init(&o);
        o.table = tables[i];
        heirloom_manager *m = NULL;
        OK(heirloom_manager_new(&o, &m));
        heirloom_agent *a = new_agent(m);
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        double tenth = 0, first_tenth = 0;
        OK(heirloom_begin(a));
        for (long k = 0; k < n; k++) {
            heirloom_lock_id r = row(10, (uint64_t)k);
            if (heirloom_lock(a, &r, HEIRLOOM_X) != HEIRLOOM_OK) {
                CHECK(0, "table %u: lock %ld: %s", tables[i], k, heirloom_message(a));
            }
            if (k + 1 == n / 10) first_tenth = seconds_since(&t0);
            if (k + 1 == n - n / 10) tenth = seconds_since(&t0);
        }
        double locked = seconds_since(&t0);
        OK(heirloom_commit(a));
        double total = seconds_since(&t0);
        printf("table %u: %ld X row locks in %.3f s (first tenth %.3f s, last tenth %.3f s), commit %.3f s\n",
               tables[i], n, locked, first_tenth, locked - tenth, total - locked);
        CHECK(total < 60.0, "table %u: %ld locks took %.1f s", tables[i], n, total);
        char *snap = heirloom_manager_snapshot_json(m);
        CHECK(snap && strcmp(snap, "{\"locks\":[]}") == 0, "table %u: locks left behind", tables[i]);
        heirloom_string_free(snap);
        OK(heirloom_agent_free(a));
        heirloom_manager_free(m);
    }
}

/* Resident pages of this process (/proc/self/statm), 0 where unknown. */
static long resident_pages(void) {
    long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = 0;
        fclose(f);
    }
    return resident;
}

/* A million agents made and freed one after another run in constant memory
 * (a freed agent's shell is reused), and a handle freed long ago is still
 * refused after its shell came back under a new handle. */
static void agents_churn_in_constant_memory(void) {
    heirloom_manager *m = new_manager(HEIRLOOM_TABLE_LATCHED, HEIRLOOM_POLICY_DETECT);
    heirloom_agent *a = NULL, *stale = NULL, *live = NULL;
    heirloom_lock_id r1 = row(1, 1);
    OK(heirloom_agent_new(m, &stale));
    OK(heirloom_agent_free(stale));
    for (int i = 0; i < 1000; i++) { /* warm the allocator and the registry */
        OK(heirloom_agent_new(m, &a));
        OK(heirloom_agent_free(a));
    }
    long before = resident_pages();
    int refused = 0;
    for (long i = 0; i < 1000000; i++) {
        if (heirloom_agent_new(m, &a) != HEIRLOOM_OK || heirloom_agent_free(a) != HEIRLOOM_OK) refused++;
    }
    long grown = (resident_pages() - before) * sysconf(_SC_PAGESIZE);
    CHECK(refused == 0, "%d churns refused", refused);
    /* Under a sanitizer or valgrind freed memory is held back on purpose
     * (ASan's quarantine): resident memory says nothing there. */
    if (getenv("HEIRLOOM_TEST_SANITIZED") == NULL)
        CHECK(grown <= 8l << 20, "a million agent churns grew resident memory by %ld bytes", grown);
    /* The stale handle's shell is in use again (one shell serves the churn). */
    OK(heirloom_agent_new(m, &live));
    CHECK(heirloom_begin(stale) == HEIRLOOM_EINVAL, "a freed handle, its shell reused");
    CHECK(heirloom_agent_free(stale) == HEIRLOOM_EINVAL, "freed twice, its shell reused");
    OK(heirloom_begin(live));
    OK(heirloom_lock(live, &r1, HEIRLOOM_X));
    OK(heirloom_commit(live));
    OK(heirloom_agent_free(live));
    heirloom_manager_free(m);
}

/* One thread, two agents: B asks for a row A holds on the same thread.
 * Only this thread could end A, so a wait would hang for ever; it is
 * refused with HEIRLOOM_EMISUSE (and B's transaction doomed) under every
 * policy that would wait, on every table. B begins first: the older. */
static void one_thread_two_agents_do_not_hang(uint32_t table, uint32_t policy) {
    heirloom_manager *m = new_manager(table, policy);
    heirloom_agent *a = new_agent(m), *b = new_agent(m);
    heirloom_lock_id r1 = row(1, 1);
    OK(heirloom_begin(b));
    OK(heirloom_begin(a));
    OK(heirloom_lock(a, &r1, HEIRLOOM_X));
    int rc = heirloom_lock(b, &r1, HEIRLOOM_S);
    CHECK(rc == HEIRLOOM_EMISUSE, "table %u policy %u: %s: %s", table, policy, heirloom_code_name(rc),
          heirloom_message(b));
    CHECK(strstr(heirloom_message(b), "same thread") != NULL, "the message says why: %s", heirloom_message(b));
    OK(heirloom_abort(b));
    OK(heirloom_commit(a));
    /* Once A is over, B's retry takes the row. */
    OK(heirloom_retry(b));
    OK(heirloom_lock(b, &r1, HEIRLOOM_S));
    OK(heirloom_commit(b));
    OK(heirloom_agent_free(a));
    OK(heirloom_agent_free(b));
    heirloom_manager_free(m);
}

/* An event loop: SESSIONS agents on this one thread, each making transfers
 * between EL_ACCOUNTS hot accounts with heirloom_lock_start, the loop
 * turning to the next session after every granted lock, so sessions on
 * the same thread hold rows others want. A request that waits is pending;
 * its ready callback (called from whatever thread decides it: a commit on
 * this thread, heirloom's timer thread) marks the session, and the loop
 * polls it. Nothing blocks the thread: under every policy every transfer
 * ends, and the money is conserved. */
#define SESSIONS 12
#define EL_ACCOUNTS 6
#define EL_TRANSFERS 200

static pthread_mutex_t el_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t el_cond = PTHREAD_COND_INITIALIZER;
static int el_ready[SESSIONS];
static long el_called;

static void el_wake(void *ctx) {
    int i = (int)(intptr_t)ctx;
    pthread_mutex_lock(&el_mutex);
    el_ready[i] = 1;
    el_called++;
    pthread_cond_signal(&el_cond);
    pthread_mutex_unlock(&el_mutex);
}

struct session {
    heirloom_agent *a;
    int step; /* 0: begin, 1: first lock, 2: second lock, 3: done */
    int pending, retry, done;
    uint64_t from, to;
    unsigned seed;
};

static void an_event_loop_of_sessions(uint32_t table, uint32_t policy) {
    heirloom_options o;
    heirloom_options_init(&o);
    o.table = table;
    o.policy = policy;
    o.partitions = 2;
    o.policy_timeout_us = 2000;
    heirloom_manager *m = NULL;
    OK(heirloom_manager_new(&o, &m));
    long money[EL_ACCOUNTS];
    for (int i = 0; i < EL_ACCOUNTS; i++) money[i] = 100;
    struct session s[SESSIONS];
    memset(el_ready, 0, sizeof el_ready);
    for (int i = 0; i < SESSIONS; i++) {
        s[i].a = new_agent(m);
        s[i].step = 0;
        s[i].pending = s[i].retry = s[i].done = 0;
        s[i].seed = (unsigned)i * 7919u + 1;
    }
    long restarts = 0, pendings = 0;
    int finished = 0;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (finished < SESSIONS) {
        int ran = 0;
        for (int i = 0; i < SESSIONS; i++) {
            struct session *x = &s[i];
            if (x->step == 3) continue;
            int rc;
            if (x->pending) {
                pthread_mutex_lock(&el_mutex);
                int r = el_ready[i];
                el_ready[i] = 0;
                pthread_mutex_unlock(&el_mutex);
                if (!r) continue;
                rc = heirloom_lock_poll(x->a);
                if (rc == HEIRLOOM_PENDING) continue; /* a spurious call */
                x->pending = 0;
            } else if (x->step == 0) {
                if (x->retry) OK(heirloom_retry(x->a));
                else OK(heirloom_begin(x->a));
                if (!x->retry) {
                    x->from = (uint64_t)(rand_r(&x->seed) % EL_ACCOUNTS);
                    x->to = (x->from + 1 + (uint64_t)(rand_r(&x->seed) % (EL_ACCOUNTS - 1))) % EL_ACCOUNTS;
                }
                x->step = 1;
                ran = 1;
                continue;
            } else {
                heirloom_lock_id r = row(1, x->step == 1 ? x->from : x->to);
                rc = heirloom_lock_start(x->a, &r, HEIRLOOM_X, HEIRLOOM_WAIT_POLICY, 0, el_wake, (void *)(intptr_t)i);
                if (rc == HEIRLOOM_PENDING) {
                    /* Everything else on this agent waits for the poll. */
                    heirloom_lock_id other = row(1, 99);
                    CHECK(heirloom_lock(x->a, &other, HEIRLOOM_S) == HEIRLOOM_EMISUSE, "a call while pending");
                    CHECK(strstr(heirloom_message(x->a), "pending") != NULL, "%s", heirloom_message(x->a));
                    CHECK(heirloom_commit(x->a) == HEIRLOOM_EMISUSE, "a commit while pending");
                    x->pending = 1;
                    pendings++;
                    ran = 1;
                    continue;
                }
            }
            ran = 1;
            if (rc == HEIRLOOM_OK) {
                if (x->step == 1) {
                    x->step = 2; /* the loop turns to the next session */
                    continue;
                }
                long f = money[x->from], t = money[x->to];
                money[x->from] = f - 1;
                money[x->to] = t + 1;
                OK(heirloom_commit(x->a));
                x->retry = 0;
                x->step = ++x->done == EL_TRANSFERS ? 3 : 0;
                if (x->step == 3) finished++;
            } else {
                CHECK(heirloom_is_restartable(rc), "table %u policy %u: %s: %s", table, policy,
                      heirloom_code_name(rc), heirloom_message(x->a));
                OK(heirloom_abort(x->a));
                restarts++;
                x->retry = 1;
                x->step = 0;
            }
        }
        if (!ran) {
            /* Nothing to run: sleep until a callback (at most 100 ms). */
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += 100 * 1000 * 1000;
            if (until.tv_nsec >= 1000000000L) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000L;
            }
            pthread_mutex_lock(&el_mutex);
            int any = 0;
            for (int i = 0; i < SESSIONS; i++) any |= el_ready[i];
            if (!any) pthread_cond_timedwait(&el_cond, &el_mutex, &until);
            pthread_mutex_unlock(&el_mutex);
        }
        CHECK(seconds_since(&t0) < 60, "table %u policy %u: the loop is stuck (%d of %d sessions done)", table,
              policy, finished, SESSIONS);
    }
    long total = 0;
    for (int i = 0; i < EL_ACCOUNTS; i++) total += money[i];
    CHECK(total == 100 * EL_ACCOUNTS, "table %u policy %u: money %ld", table, policy, total);
    if (policy == HEIRLOOM_POLICY_DETECT) CHECK(pendings > 0, "sessions on one thread waited for each other");
    for (int i = 0; i < SESSIONS; i++) OK(heirloom_agent_free(s[i].a));
    heirloom_manager_free(m);
    printf("event loop: table %u policy %u: %d transfers, %ld pending, %ld restarts, %.3f s\n", table, policy,
           SESSIONS * EL_TRANSFERS, pendings, restarts, seconds_since(&t0));
}

/* Conversions under wait-die, as the policy's documentation states them:
 * of two S holders, the younger asking for X dies against the older's S
 * and keeps its S (doomed: it aborts); the older asking for X waits as a
 * conversion (pending here, so that one thread can hold both) and is
 * granted X when the younger ends. */
static void wait_die_conversions(uint32_t table) {
    heirloom_manager *m = new_manager(table, HEIRLOOM_POLICY_WAITDIE);
    heirloom_agent *old = new_agent(m), *young = new_agent(m);
    heirloom_lock_id r = row(9, 1);
    uint32_t mode = 99;
    OK(heirloom_begin(old));
    OK(heirloom_begin(young));
    OK(heirloom_lock(old, &r, HEIRLOOM_S));
    OK(heirloom_lock(young, &r, HEIRLOOM_S));
    int rc = heirloom_lock(young, &r, HEIRLOOM_X);
    CHECK(rc == HEIRLOOM_EDIED, "table %u: the younger's conversion dies: %s", table, heirloom_code_name(rc));
    OK(heirloom_held_mode(young, &r, &mode));
    CHECK(mode == HEIRLOOM_S, "table %u: the younger keeps its S: %u", table, mode);
    OK(heirloom_abort(young));
    /* Again, now with the older converting first. */
    OK(heirloom_retry(young)); /* as old as before: still the younger */
    OK(heirloom_lock(young, &r, HEIRLOOM_S));
    rc = heirloom_lock_start(old, &r, HEIRLOOM_X, HEIRLOOM_WAIT_POLICY, 0, el_wake, (void *)(intptr_t)0);
    CHECK(rc == HEIRLOOM_PENDING, "table %u: the older's conversion waits: %s", table, heirloom_code_name(rc));
    OK(heirloom_commit(young));
    for (int i = 0; i < 20000 && (rc = heirloom_lock_poll(old)) == HEIRLOOM_PENDING; i++) usleep(1000);
    CHECK(rc == HEIRLOOM_OK, "table %u: granted once the younger ended: %s", table, heirloom_code_name(rc));
    OK(heirloom_held_mode(old, &r, &mode));
    CHECK(mode == HEIRLOOM_X, "table %u: the older holds X: %u", table, mode);
    OK(heirloom_commit(old));
    OK(heirloom_agent_free(old));
    OK(heirloom_agent_free(young));
    heirloom_manager_free(m);
}

/* A pending request withdrawn by heirloom_lock_cancel: the transaction
 * goes on, the row is free for another once its holder commits, and
 * nothing is pending any more. heirloom_abort withdraws one too. */
static void a_pending_request_is_withdrawn(void) {
    heirloom_manager *m = new_manager(HEIRLOOM_TABLE_LATCHFREE, HEIRLOOM_POLICY_DETECT);
    heirloom_agent *a = new_agent(m), *b = new_agent(m), *c = new_agent(m);
    heirloom_lock_id r1 = row(1, 1), r2 = row(1, 2);
    OK(heirloom_begin(a));
    OK(heirloom_lock(a, &r1, HEIRLOOM_X));
    OK(heirloom_begin(b));
    int rc = heirloom_lock_start(b, &r1, HEIRLOOM_S, HEIRLOOM_WAIT_POLICY, 0, el_wake, (void *)(intptr_t)0);
    CHECK(rc == HEIRLOOM_PENDING, "%s", heirloom_code_name(rc));
    OK(heirloom_lock_cancel(b));
    CHECK(heirloom_lock_poll(b) == HEIRLOOM_EMISUSE, "nothing pending after the cancel");
    CHECK(heirloom_lock_cancel(b) == HEIRLOOM_EMISUSE, "nothing to cancel");
    OK(heirloom_lock(b, &r2, HEIRLOOM_X)); /* b goes on */
    uint32_t mode = 99;
    OK(heirloom_held_mode(b, &r1, &mode));
    CHECK(mode == HEIRLOOM_NL, "the cancelled request is not held: %u", mode);
    OK(heirloom_commit(a));
    OK(heirloom_begin(c));
    OK(heirloom_lock_with(c, &r1, HEIRLOOM_X, HEIRLOOM_WAIT_NOWAIT, 0)); /* nobody queued on r1 */
    /* An abort withdraws a pending request. */
    rc = heirloom_lock_start(b, &r1, HEIRLOOM_X, HEIRLOOM_WAIT_POLICY, 0, el_wake, (void *)(intptr_t)0);
    CHECK(rc == HEIRLOOM_PENDING, "%s", heirloom_code_name(rc));
    OK(heirloom_abort(b));
    OK(heirloom_commit(c));
    /* Granted at once: no callback needed. */
    OK(heirloom_begin(b));
    OK(heirloom_lock_start(b, &r1, HEIRLOOM_X, HEIRLOOM_WAIT_POLICY, 0, el_wake, (void *)(intptr_t)0));
    CHECK(heirloom_lock_start(b, &r1, HEIRLOOM_X, HEIRLOOM_WAIT_POLICY, 0, NULL, NULL) == HEIRLOOM_EINVAL,
          "a null callback");
    CHECK(strcmp(heirloom_code_name(HEIRLOOM_PENDING), "pending") == 0, "the code's name");
    OK(heirloom_commit(b));
    OK(heirloom_agent_free(a));
    OK(heirloom_agent_free(b));
    OK(heirloom_agent_free(c));
    heirloom_manager_free(m);
}

/* heirloom_wait_for_txn_start: a session waits for another's end on the
 * same thread without blocking it; the ready callback is called once the
 * other commits; a second wait, for a transaction that ended, is granted
 * at once; skip answers BUSY at once; waiting for itself, a null callback
 * and a bad wait are refused with their messages. */
static void a_pending_wait_for_a_transaction(uint32_t table) {
    heirloom_manager *m = new_manager(table, HEIRLOOM_POLICY_DETECT);
    heirloom_agent *a = new_agent(m), *b = new_agent(m);
    uint64_t id = 0, own = 0;
    OK(heirloom_begin(a));
    OK(heirloom_publish_id(a));
    OK(heirloom_txn_id(a, &id));
    OK(heirloom_begin(b));
    OK(heirloom_txn_id(b, &own));
    int rc = heirloom_wait_for_txn_start(b, id, HEIRLOOM_WAIT_SKIP, 0, el_wake, (void *)(intptr_t)0);
    CHECK(rc == HEIRLOOM_BUSY, "table %u: skip: %s", table, heirloom_code_name(rc));
    pthread_mutex_lock(&el_mutex);
    long called = el_called;
    pthread_mutex_unlock(&el_mutex);
    rc = heirloom_wait_for_txn_start(b, id, HEIRLOOM_WAIT_POLICY, 0, el_wake, (void *)(intptr_t)0);
    CHECK(rc == HEIRLOOM_PENDING, "table %u: a runs: %s", table, heirloom_code_name(rc));
    CHECK(heirloom_commit(b) == HEIRLOOM_EMISUSE, "table %u: a commit while pending", table);
    OK(heirloom_commit(a));
    pthread_mutex_lock(&el_mutex);
    for (int i = 0; i < 600 && el_called == called; i++) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 1;
        pthread_cond_timedwait(&el_cond, &el_mutex, &until);
    }
    CHECK(el_called > called, "table %u: ready was called", table);
    pthread_mutex_unlock(&el_mutex);
    for (int i = 0; i < 20000 && (rc = heirloom_lock_poll(b)) == HEIRLOOM_PENDING; i++) usleep(1000);
    CHECK(rc == HEIRLOOM_OK, "table %u: a ended: %s", table, heirloom_code_name(rc));
    OK(heirloom_wait_for_txn_start(b, id, HEIRLOOM_WAIT_POLICY, 0, el_wake, (void *)(intptr_t)0));
    rc = heirloom_wait_for_txn_start(b, own, HEIRLOOM_WAIT_POLICY, 0, el_wake, (void *)(intptr_t)0);
    CHECK(rc == HEIRLOOM_EINVAL, "table %u: a wait for itself: %s", table, heirloom_code_name(rc));
    CHECK(strstr(heirloom_message(b), "itself") != NULL, "%s", heirloom_message(b));
    OK(heirloom_abort(b));
    OK(heirloom_begin(b));
    CHECK(heirloom_wait_for_txn_start(b, id, HEIRLOOM_WAIT_POLICY, 0, NULL, NULL) == HEIRLOOM_EINVAL,
          "a null callback");
    CHECK(heirloom_wait_for_txn_start(b, id, 9, 0, el_wake, NULL) == HEIRLOOM_EINVAL, "a bad wait");
    CHECK(strstr(heirloom_message(b), "invalid wait") != NULL, "%s", heirloom_message(b));
    OK(heirloom_commit(b));
    CHECK(heirloom_wait_for_txn_start(b, id, HEIRLOOM_WAIT_POLICY, 0, el_wake, NULL) == HEIRLOOM_EMISUSE,
          "no transaction");
    OK(heirloom_agent_free(a));
    OK(heirloom_agent_free(b));
    heirloom_manager_free(m);
}

int main(void) {
    each_call();
    {
        uint32_t tables[] = {HEIRLOOM_TABLE_LATCHED, HEIRLOOM_TABLE_LATCHFREE, HEIRLOOM_TABLE_SERVER,
                             HEIRLOOM_TABLE_GLOBAL};
        uint32_t waiting[] = {HEIRLOOM_POLICY_DETECT, HEIRLOOM_POLICY_WAITDIE, HEIRLOOM_POLICY_WOUNDWAIT};
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 3; j++) one_thread_two_agents_do_not_hang(tables[i], waiting[j]);
    }
    agents_churn_in_constant_memory();
    a_retry_keeps_its_age();
    a_restart_goes_exclusive();
    the_spin_before_a_park();
    the_cores_told();
    many_locks_in_one_transaction();
    no_lock_table();
    without_intention_locks(HEIRLOOM_TABLE_LATCHED);
    without_intention_locks(HEIRLOOM_TABLE_LATCHFREE);
    without_intention_locks(HEIRLOOM_TABLE_SERVER);
    fast_rows_option(HEIRLOOM_TABLE_LATCHED);
    fast_rows_option(HEIRLOOM_TABLE_LATCHFREE);
    misuse();
    another_thread();
    a_worker_puts_a_session_down(HEIRLOOM_TABLE_LATCHED);
    a_worker_puts_a_session_down(HEIRLOOM_TABLE_LATCHFREE);
    a_worker_puts_a_session_down(HEIRLOOM_TABLE_SERVER);
    a_worker_puts_a_session_down(HEIRLOOM_TABLE_GLOBAL);
    after_a_panic();
    a_deadlock();
    a_pending_request_is_withdrawn();
    a_pending_wait_for_a_transaction(HEIRLOOM_TABLE_LATCHED);
    a_pending_wait_for_a_transaction(HEIRLOOM_TABLE_LATCHFREE);
    a_pending_wait_for_a_transaction(HEIRLOOM_TABLE_LATCHFREE_SWAP);
    a_pending_wait_for_a_transaction(HEIRLOOM_TABLE_SERVER);
    a_pending_wait_for_a_transaction(HEIRLOOM_TABLE_GLOBAL);
    wait_die_conversions(HEIRLOOM_TABLE_LATCHED);
    wait_die_conversions(HEIRLOOM_TABLE_LATCHFREE);
    wait_die_conversions(HEIRLOOM_TABLE_LATCHFREE_SWAP);
    wait_die_conversions(HEIRLOOM_TABLE_SERVER);
    wait_die_conversions(HEIRLOOM_TABLE_GLOBAL);
    {
        uint32_t el_tables[] = {HEIRLOOM_TABLE_LATCHED, HEIRLOOM_TABLE_LATCHFREE, HEIRLOOM_TABLE_SERVER,
                                HEIRLOOM_TABLE_GLOBAL};
        uint32_t el_policies[] = {HEIRLOOM_POLICY_DETECT, HEIRLOOM_POLICY_TIMEOUT, HEIRLOOM_POLICY_NOWAIT,
                                  HEIRLOOM_POLICY_WAITDIE, HEIRLOOM_POLICY_WOUNDWAIT};
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 5; j++) an_event_loop_of_sessions(el_tables[i], el_policies[j]);
    }
    uint32_t tables[] = {HEIRLOOM_TABLE_LATCHED, HEIRLOOM_TABLE_LATCHFREE, HEIRLOOM_TABLE_SERVER,
                         HEIRLOOM_TABLE_GLOBAL_HTM};
    uint32_t policies[] = {HEIRLOOM_POLICY_DETECT, HEIRLOOM_POLICY_NOWAIT, HEIRLOOM_POLICY_WAITDIE,
                           HEIRLOOM_POLICY_WOUNDWAIT};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) bank(tables[i], policies[j]);
    printf("heirloom C tests: %d checks passed\n", checks);
    return 0;
}
