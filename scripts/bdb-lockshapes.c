/*
 * Berkeley DB's lock subsystem under the lock shapes of heirloom's
 * `lockshapes` example, for a side-by-side comparison (scripts/lockshapes.sh).
 * Every transaction makes three lock_get calls (database, table, row) with
 * one locker per thread and releases them with one lock_vec(DB_LOCK_PUT_ALL),
 * as a heirloom transaction takes a row lock with its two intention locks
 * and commits.
 *
 *   bdb-lockshapes SHAPE THREADS SECONDS [get|vec]
 *
 * `get` (the default) makes the three requests with three lock_get calls;
 * `vec` hands them over in one lock_vec call (whichever is faster is the
 * one to compare with).
 * SHAPE: hot    IS database, IS table, S on one row every thread takes
 *        update IX database, IX table, X on a row of the thread's own
 *        tm1    80% IS/IS/S, 20% IX/IX/X on a random row of one of four
 *               tables of 100,000 rows
 * Prints one line: "bdb SHAPE THREADS TXN_PER_S".
 */
#include <db.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum shape { HOT, UPDATE, TM1 };

static DB_ENV *env;
static enum shape shape;
static volatile int stop;
static int vec;
static pthread_barrier_t start;

struct worker {
	pthread_t thread;
	int index;
	uint64_t done;
};

static void die(const char *what, int ret)
{
	fprintf(stderr, "bdb-lockshapes: %s: %s\n", what, db_strerror(ret));
	exit(1);
}

/* Lock object names: level byte, table, row (as heirloom's ids). */
struct name {
	uint8_t level;
	uint8_t table;
	uint64_t row;
} __attribute__((packed));

static void get(u_int32_t locker, const struct name *n, db_lockmode_t mode, DB_LOCK *lock)
{
	DBT obj;
	memset(&obj, 0, sizeof obj);
	obj.data = (void *)n;
	obj.size = sizeof *n;
	int ret = env->lock_get(env, locker, 0, &obj, mode, lock);
	if (ret != 0)
		die("lock_get", ret);
}

static uint64_t next(uint64_t *x)
{
	/* xorshift64* */
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 0x2545F4914F6CDD1DULL;
}

static void *run(void *arg)
{
	struct worker *w = arg;
	u_int32_t locker;
	int ret = env->lock_id(env, &locker);
	if (ret != 0)
		die("lock_id", ret);
	uint64_t rng = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)(w->index + 1) << 17);
	uint64_t k = 0;
	DB_LOCKREQ put;
	memset(&put, 0, sizeof put);
	put.op = DB_LOCK_PUT_ALL;
	pthread_barrier_wait(&start);
	while (!stop) {
		struct name db = { 0, 0, 0 }, table = { 1, 1, 0 }, row = { 3, 1, 0 };
		db_lockmode_t intent = DB_LOCK_IREAD, leaf = DB_LOCK_READ;
		switch (shape) {
		case HOT:
			break;
		case UPDATE:
			intent = DB_LOCK_IWRITE;
			leaf = DB_LOCK_WRITE;
			row.row = (uint64_t)w->index * 1000000 + (k++ & 1023);
			break;
		case TM1: {
			uint64_t r = next(&rng);
			if (r % 100 < 20) {
				intent = DB_LOCK_IWRITE;
				leaf = DB_LOCK_WRITE;
			}
			table.table = row.table = 1 + (r >> 8) % 4;
			row.row = (r >> 16) % 100000;
			break;
		}
		}
		DB_LOCKREQ *failed;
		if (vec) {
			DBT objs[3];
			DB_LOCKREQ reqs[3];
			const struct name *names[3] = { &db, &table, &row };
			memset(objs, 0, sizeof objs);
			memset(reqs, 0, sizeof reqs);
			for (int i = 0; i < 3; i++) {
				objs[i].data = (void *)names[i];
				objs[i].size = sizeof(struct name);
				reqs[i].op = DB_LOCK_GET;
				reqs[i].obj = &objs[i];
				reqs[i].mode = i < 2 ? intent : leaf;
			}
			ret = env->lock_vec(env, locker, 0, reqs, 3, &failed);
			if (ret != 0)
				die("lock_vec(DB_LOCK_GET)", ret);
		} else {
			DB_LOCK l;
			get(locker, &db, intent, &l);
			get(locker, &table, intent, &l);
			get(locker, &row, leaf, &l);
		}
		ret = env->lock_vec(env, locker, 0, &put, 1, &failed);
		if (ret != 0)
			die("lock_vec(DB_LOCK_PUT_ALL)", ret);
		w->done++;
	}
	env->lock_id_free(env, locker);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: bdb-lockshapes hot|update|tm1 THREADS SECONDS [get|vec]\n");
		return 2;
	}
	if (argc == 5) {
		if (!strcmp(argv[4], "vec"))
			vec = 1;
		else if (strcmp(argv[4], "get")) {
			fprintf(stderr, "bdb-lockshapes: unknown call style %s\n", argv[4]);
			return 2;
		}
	}
	if (!strcmp(argv[1], "hot"))
		shape = HOT;
	else if (!strcmp(argv[1], "update"))
		shape = UPDATE;
	else if (!strcmp(argv[1], "tm1"))
		shape = TM1;
	else {
		fprintf(stderr, "bdb-lockshapes: unknown shape %s\n", argv[1]);
		return 2;
	}
	int threads = atoi(argv[2]);
	double seconds = atof(argv[3]);
	if (threads < 1 || threads > 1024 || !(seconds > 0)) {
		fprintf(stderr, "bdb-lockshapes: bad THREADS or SECONDS\n");
		return 2;
	}
	int ret;
	if ((ret = db_env_create(&env, 0)) != 0)
		die("db_env_create", ret);
	env->set_lk_max_lockers(env, 4096);
	env->set_lk_max_locks(env, 100000);
	env->set_lk_max_objects(env, 100000);
	env->set_lk_detect(env, DB_LOCK_DEFAULT);
	if ((ret = env->open(env, NULL, DB_CREATE | DB_INIT_LOCK | DB_PRIVATE | DB_THREAD, 0)) != 0)
		die("DB_ENV->open", ret);
	struct worker *ws = calloc(threads, sizeof *ws);
	pthread_barrier_init(&start, NULL, threads + 1);
	for (int i = 0; i < threads; i++) {
		ws[i].index = i;
		pthread_create(&ws[i].thread, NULL, run, &ws[i]);
	}
	struct timespec t0, t1, pause = { (time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9) };
	pthread_barrier_wait(&start);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	nanosleep(&pause, NULL);
	stop = 1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	uint64_t total = 0;
	for (int i = 0; i < threads; i++) {
		pthread_join(ws[i].thread, NULL);
		total += ws[i].done;
	}
	double el = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("bdb%s %s %d %.0f\n", vec ? ":vec" : "", argv[1], threads, total / el);
	env->close(env, 0);
	return 0;
}
