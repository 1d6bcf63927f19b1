"""Paste buffers and pipes: list-buffers, show-buffer, set-buffer, delete-buffer, paste-buffer,
pipe-pane. The buffers are the ones copy mode fills (daemon/panes/paste_buffers.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from muxd.daemon.commands.table import command
from muxd.daemon.panes.paste_buffers import PasteBuffer as Buffer
from muxd.daemon.panes.paste_buffers import sample
from muxd.errors import Conflict
from muxd.protocol.messages import (
    BufferInfo, BufferList, DeleteBuffer, ListBuffers, Ok, PasteBuffer, PipePane, SetBuffer,
)

if TYPE_CHECKING:
    from muxd.daemon.panes.pane import Pane
    from muxd.daemon.server import Daemon


def _info(buffer: Buffer, text: bool) -> BufferInfo:
    return BufferInfo(name=buffer.name, size=len(buffer.text.encode("utf-8", "surrogateescape")), sample=sample(buffer.text),
                      text=buffer.text if text else None)


@command(ListBuffers)
async def list_buffers(daemon: Daemon, req: ListBuffers) -> BufferList:
    buffers = daemon.attach_hub.buffers
    if req.text or req.name is not None:
        return BufferList(id=req.id, buffers=[_info(buffers.get(req.name), True)])
    return BufferList(id=req.id, buffers=[_info(b, False) for b in buffers.newest_first()])


@command(SetBuffer)
async def set_buffer(daemon: Daemon, req: SetBuffer) -> Ok:
    buffers = daemon.attach_hub.buffers
    if req.new_name is not None:
        old = buffers.get(req.name)
        buffers.set(req.new_name, old.text)
        buffers.delete(old.name)
    else:
        buffers.set(req.name, req.text, append=req.append)
    return Ok(id=req.id)


@command(DeleteBuffer)
async def delete_buffer(daemon: Daemon, req: DeleteBuffer) -> Ok:
    daemon.attach_hub.buffers.delete(req.name)
    return Ok(id=req.id)


@command(PasteBuffer, target="pane")
async def paste_buffer(daemon: Daemon, req: PasteBuffer, pane: Pane) -> Ok:
    """As tmux: line feeds become carriage returns (-s SEP: SEP; -r: kept), as Enter types them;
    -p wraps the text in bracketed-paste markers when the program asked for them."""
    buffers = daemon.attach_hub.buffers
    buffer = buffers.get(req.name)
    if pane.exited:
        raise Conflict(f"pane {pane.id} has exited", pane=pane.id)
    text = buffer.text if req.raw else buffer.text.replace("\n", "\r" if req.separator is None else req.separator)
    data = text.encode("utf-8", "surrogateescape")  # set-buffer's bytes that are not UTF-8, as given
    if req.bracketed:
        from muxd.daemon.client_side.attached import paste_into  # the attach machinery, loaded at use

        paste_into(pane, data)
    else:
        pane.write(data)
    if req.delete:
        buffers.delete(buffer.name)
    return Ok(id=req.id)


@command(PipePane, target="pane")
async def pipe_pane(daemon: Daemon, req: PipePane, pane: Pane) -> Ok:
    await daemon.pipes.open(pane, req.command, output=req.output, input=req.input,
                            only_if_none=req.only_if_none)
    return Ok(id=req.id)
