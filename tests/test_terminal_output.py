"""TtyOutput: the daemon's writes to an attached client's terminal, on a real pseudo-terminal
that is not read for a while (a slow terminal): nothing blocks, nothing is lost or reordered."""

from __future__ import annotations

import asyncio
import os
import pty
import tty

import pytest

from muxd.daemon.client_side.terminal_output import TtyOutput, open_passed_tty


def test_a_terminal_that_does_not_read_holds_the_rest_in_order_until_it_does():
    async def run() -> None:
        master, slave = pty.openpty()
        tty.setraw(slave)
        os.set_blocking(master, False)
        output = TtyOutput(open_passed_tty(slave))
        try:
            assert os.get_blocking(slave)  # the passed description stays blocking for the client
            chunks = [f"{i:06d}".encode() * 1000 for i in range(64)]  # 384 KB: far beyond a pty's buffer
            for chunk in chunks:
                output.write(chunk)  # never blocks
            assert output.backlog() > 0  # the terminal did not take it all
            drained = asyncio.ensure_future(output.drain())
            received = bytearray()
            expected = b"".join(chunks)
            loop = asyncio.get_running_loop()
            done = loop.create_future()

            def readable() -> None:  # the terminal reading, on the loop that runs the output's writer
                received.extend(os.read(master, 65536))
                if len(received) >= len(expected) and not done.done():
                    done.set_result(None)

            loop.add_reader(master, readable)
            try:
                await asyncio.wait_for(done, 20)
            finally:
                loop.remove_reader(master)
            assert bytes(received) == expected
            await asyncio.wait_for(drained, 5)
            assert output.backlog() == 0
        finally:
            output.close()
            os.close(master)
            os.close(slave)
        assert output.fd == -1
        output.write(b"after close")  # dropped, no error

    asyncio.run(run())


def test_only_a_terminal_is_taken():
    read_end, write_end = os.pipe()
    try:
        with pytest.raises(OSError):
            open_passed_tty(write_end)
    finally:
        os.close(read_end)
        os.close(write_end)
