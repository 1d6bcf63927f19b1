/* A prototype of a compiled `tmux` launcher for muxd, for benchmarks/bench_tmux_shim.py only (not
 * shipped): what a shim call would cost without an interpreter. It connects to the daemon's
 * socket, sends every request body given (hex, msgpack, as muxd's fast path packs them: Hello
 * first) in muxd's framing (a 4-byte big-endian length, then the body) in one write, as the fast
 * path does, reads one reply frame per request and writes the last reply's body to stdout. A
 * real launcher would read tmux's argv and pack and unpack msgpack itself: microseconds beside a
 * process start.
 *
 *     tmux_launcher SOCKET HEX-BODY...
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void fail(const char *what) {
    perror(what);
    exit(1);
}

static void send_all(int fd, const unsigned char *data, size_t size) {
    while (size > 0) {
        ssize_t sent = write(fd, data, size);
        if (sent <= 0)
            fail("write");
        data += sent;
        size -= (size_t)sent;
    }
}

static void read_all(int fd, unsigned char *data, size_t size) {
    while (size > 0) {
        ssize_t got = read(fd, data, size);
        if (got <= 0)
            fail("read");
        data += got;
        size -= (size_t)got;
    }
}

static int nibble(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s SOCKET HEX-BODY...\n", argv[0]);
        return 2;
    }
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (strlen(argv[1]) >= sizeof address.sun_path)
        return 2;
    strcpy(address.sun_path, argv[1]);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) < 0)
        fail("connect");
    size_t total = 0;
    for (int at = 2; at < argc; at++)
        total += 4 + strlen(argv[at]) / 2;
    unsigned char *frames = malloc(total ? total : 1), *out = frames;
    for (int at = 2; at < argc; at++) {
        size_t size = strlen(argv[at]) / 2;
        out[0] = size >> 24, out[1] = size >> 16, out[2] = size >> 8, out[3] = size;
        for (size_t i = 0; i < size; i++) {
            int high = nibble(argv[at][2 * i]), low = nibble(argv[at][2 * i + 1]);
            if (high < 0 || low < 0)
                return 2;
            out[4 + i] = (unsigned char)(high << 4 | low);
        }
        out += 4 + size;
    }
    send_all(fd, frames, total);
    free(frames);
    unsigned char *reply = NULL;
    uint32_t reply_size = 0;
    for (int at = 2; at < argc; at++) {
        unsigned char header[4];
        read_all(fd, header, 4);
        reply_size = (uint32_t)header[0] << 24 | (uint32_t)header[1] << 16 | (uint32_t)header[2] << 8 | header[3];
        free(reply);
        reply = malloc(reply_size ? reply_size : 1);
        read_all(fd, reply, reply_size);
    }
    fwrite(reply, 1, reply_size, stdout);
    close(fd);
    return 0;
}
