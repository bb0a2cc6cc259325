/* The stages of segbench.semantic._native timed one by one (benchmarks/semantic_stages.py
 * builds and runs this): the extension's source is included whole, so its static
 * functions are called as count_png_pair calls them. CPU time of this process. */
#include SEGBENCH_NATIVE_SOURCE
#include <time.h>

static double cpu_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int by_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* argv: folder (gt/ and pred/ of NNNN.png), number of pairs, repeats, classes */
int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s FOLDER PAIRS REPEATS CLASSES\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    int pairs = atoi(argv[2]), repeats = atoi(argv[3]);
    int64_t classes = atoll(argv[4]);
    init_values();
    State *s = &ST;
    s->ta = malloc(sizeof(Tables));
    s->tb = malloc(sizeof(Tables));
    s->pairs = calloc(65536, sizeof(uint32_t));
    int64_t *cells = malloc(sizeof(int64_t) * 2 * 65536);
    enum { READ, INFLATE, CHECK, UNFILTER, COUNT, FOLD, NSTAGE };
    static const char *names[NSTAGE] = {"read+parse", "inflate", "adler32", "unfilter", "count",
                                         "fold"};
    double *runs = calloc((size_t)(NSTAGE * repeats), sizeof(double));
    char g[4096], p[4096];
    for (int r = 0; r < repeats; r++) {
        double t[NSTAGE] = {0};
        for (int i = 0; i < pairs; i++) {
            snprintf(g, sizeof g, "%s/gt/%04d.png", dir, i);
            snprintf(p, sizeof p, "%s/pred/%04d.png", dir, i);
            double t0 = cpu_now();
            if (!read_file(g, &s->a) || !read_file(p, &s->b) || !parse(&s->a) ||
                !parse(&s->b) || s->a.h != s->b.h || s->a.w != s->b.w) {
                fprintf(stderr, "%s: not a pair this path decodes\n", g);
                return 1;
            }
            int64_t h = s->a.h, w = s->a.w, n_raw = h * (w + 1);
            grow(&s->raw_a, &s->cap_a, n_raw + SPARE);
            grow(&s->raw_b, &s->cap_b, n_raw + SPARE);
            grow(&s->a.buf, &s->a.cap, h * w);
            grow(&s->b.buf, &s->b.cap, h * w);
            double t1 = cpu_now();
            Stream sa, sb;
            stream_init(&sa, s->a.buf + s->a.start + 2, s->a.total - 2, s->raw_a, n_raw, s->ta);
            stream_init(&sb, s->b.buf + s->b.start + 2, s->b.total - 2, s->raw_b, n_raw, s->tb);
            int ok = LITERAL_HEAVY * s->a.total >= n_raw && LITERAL_HEAVY * s->b.total >= n_raw
                         ? inflate_pair(&sa, &sb)
                         : inflate1(&sa) && inflate1(&sb);
            double t2c = cpu_now();
            ok = ok && stream_checked(&sa) && stream_checked(&sb);
            double t2 = cpu_now();
            ok = ok && unfilter8(s->raw_a, h, w, s->a.buf) && unfilter8(s->raw_b, h, w, s->b.buf);
            double t3 = cpu_now();
            count_bytes(s->a.buf, s->b.buf, h * w, s->pairs);
            double t4 = cpu_now();
            int64_t k;
            ok = ok && fold(classes, 255, 0, cells, cells + 65536, &k);
            double t5 = cpu_now();
            if (!ok) {
                fprintf(stderr, "%s: decoding or a label failed\n", g);
                return 1;
            }
            t[READ] += t1 - t0;
            t[INFLATE] += t2c - t1;
            t[CHECK] += t2 - t2c;
            t[UNFILTER] += t3 - t2;
            t[COUNT] += t4 - t3;
            t[FOLD] += t5 - t4;
        }
        for (int j = 0; j < NSTAGE; j++) runs[j * repeats + r] = t[j];
    }
    double total = 0;
    for (int j = 0; j < NSTAGE; j++) {
        qsort(runs + j * repeats, (size_t)repeats, sizeof(double), by_double);
        double med = runs[j * repeats + repeats / 2];
        total += med;
        printf("%s %.2f\n", names[j], med * 1e3);
    }
    printf("total %.2f\n", total * 1e3);
    return 0;
}
