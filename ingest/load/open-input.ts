import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { UnreadableInput } from '../../domain/errors.ts';

/** Opens a file for streaming; a file that cannot be opened becomes {@link UnreadableInput} (exit 2). */
export async function openInput(path: string): Promise<Readable> {
  let file;
  try {
    file = await open(path, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES'
          ? 'permission denied'
          : code === 'EISDIR'
            ? 'is a directory'
            : String(code ?? error);
    throw new UnreadableInput(path, null, `cannot be read (${why}): check the path`, { cause: error });
  }
  // A directory opens for reading on Linux and fails only at the first read (EISDIR, exit 1): say so now.
  if ((await file.stat()).isDirectory()) {
    await file.close();
    throw new UnreadableInput(path, null, 'cannot be read (is a directory): give the path of a file');
  }
  return file.createReadStream({ highWaterMark: 256 * 1024 });
}
