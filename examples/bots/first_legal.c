/* A bot for five-hundred's cmd: agents, in C, that plays its first legal action (docs/protocol.md).

   It reads the project's JSON lines on standard input and answers every line holding
   "legal_actions" with {"action": ID}, ID the first number of that list. No JSON library: the
   protocol's keys are plain ASCII and "legal_actions" appears once in a decision's line.

       cc -O2 -o first_legal examples/bots/first_legal.c
       five-hundred evaluate "cmd:./first_legal" random --deals 20
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    size_t size = 1 << 16;
    char *line = malloc(size);
    if (!line) return 1;
    size_t len = 0;
    int c;
    while ((c = getchar()) != EOF) {
        if (c != '\n') {
            if (len + 1 >= size) {
                size *= 2;
                char *bigger = realloc(line, size);
                if (!bigger) return 1;
                line = bigger;
            }
            line[len++] = (char)c;
            continue;
        }
        line[len] = '\0';
        len = 0;
        char *legal = strstr(line, "\"legal_actions\":");
        if (!legal) continue;               /* start, deal_start, deal_end, game_end: no answer */
        char *first = strchr(legal, '[');
        if (!first) return 2;
        printf("{\"action\": %ld}\n", strtol(first + 1, NULL, 10));
        fflush(stdout);
    }
    free(line);
    return 0;
}
