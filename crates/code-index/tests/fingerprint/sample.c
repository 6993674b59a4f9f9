/* A file that uses most of what C extraction looks at. */
#include <stdio.h>
#include "store.h"

#define LIMIT 10
#define SQUARE(x) ((x) * (x))

typedef struct linter {
    struct store *store;
    int count;
} linter_t;

enum level { LOW, HIGH };

static int count_file(const linter_t *l, const char *f);

/* Builds a linter. */
linter_t *linter_new(struct store *s) {
    linter_t *l = malloc(sizeof *l);
    l->store = s;
    return l;
}

static int count_file(const linter_t *l, const char *f) {
    return store_lookup(l->store, f) + SQUARE(l->count);
}

int linter_check(linter_t *l, const char **files, int n) {
    int total = 0;
    for (int i = 0; i < n; i++) {
        total += count_file(l, files[i]);
    }
    printf("%d\n", total);
    return total;
}
