import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { UnreadableInput } from '../../domain/errors.ts';

/** Opens a file for streaming; a file that cannot be opened becomes {@link UnreadableInput} (exit 2). */
export async function openInput(path: string): Promise<Readable> {
  try {
    const file = await open(path, 'r');
    return file.createReadStream({ highWaterMark: 256 * 1024 });
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
}
