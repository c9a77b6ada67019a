/** Writing a credential to a file that no one else can read. */
import { randomBytes } from 'node:crypto';
import { chmod, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Writes `text` to `file` with mode 0600: to a new file beside it, created 0600, then renamed
 * over it, so the credential is never readable by others, not even while being written.
 */
export async function writePrivateFile(file: string, text: string): Promise<void> {
  const temporary = join(dirname(file), `.${basename(file)}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await open(temporary, 'wx', 0o600);
  try {
    await handle.writeFile(text, 'utf8');
    await handle.chmod(0o600);
    await handle.close();
    await rename(temporary, file);
    await chmod(file, 0o600);
  } catch (err) {
    await handle.close().catch(() => undefined);
    await rm(temporary, { force: true });
    throw err;
  }
}
