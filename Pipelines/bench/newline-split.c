/* The floor for reading JSON Lines: a pass over each file that finds its lines (memchr for the
 * newline in a 1 MiB buffer) and touches nothing else. `make bench` builds it; the `split_jsonl_c`
 * case of sluice-bench times it on the kit's JSON Lines files.
 *   newline-split FILE...      prints the number of lines */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    static char buffer[1 << 20];
    long lines = 0;
    for (int i = 1; i < argc; i++) {
        int fd = open(argv[i], O_RDONLY);
        if (fd < 0) { perror(argv[i]); return 1; }
        ssize_t n;
        while ((n = read(fd, buffer, sizeof buffer)) > 0) {
            const char *p = buffer, *end = buffer + n;
            while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) { lines++; p++; }
        }
        if (n < 0) { perror(argv[i]); return 1; }
        close(fd);
    }
    printf("%ld\n", lines);
    return 0;
}
