// How the supervisor writes a simulation's lines to its log.

/**
 * A log that writes a line repeated back to back once, then how often it came: a simulated
 * actor that fails on every poll (once a second) would otherwise fill the log.
 */
export function repeatSuppressing(write: (line: string) => void): (line: string) => void {
  let last: string | undefined;
  let repeats = 0;
  let lastWritten = 0;
  return (line: string) => {
    if (line === last) {
      repeats += 1;
      // A reminder now and then that it still happens.
      if (Date.now() - lastWritten < 60_000) return;
      write(`${line} (repeated ${repeats} times)`);
      repeats = 0;
      lastWritten = Date.now();
      return;
    }
    if (repeats > 0) write(`(the simulation's line before repeated ${repeats} more times)`);
    last = line;
    repeats = 0;
    lastWritten = Date.now();
    write(line);
  };
}
