/**
 * Prometheus text as the hook server's and Metacontroller's /metrics serve it: parsed into
 * samples, differenced between two scrapes (counters), summed by name and labels.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1] ?? ''] = pair[2] ?? '';
    }
    samples.push({ name: match[1] ?? '', labels, value: Number(match[4]) });
  }
  return samples;
}

function sampleKey(sample: Sample): string {
  const labels = Object.keys(sample.labels)
    .sort()
    .map((key) => `${key}=${sample.labels[key]}`)
    .join(',');
  return `${sample.name}{${labels}}`;
}

/** after − before for every sample of `after` (counters; a sample absent before counts from 0). */
export function difference(before: Sample[], after: Sample[]): Sample[] {
  const previous = new Map(before.map((sample) => [sampleKey(sample), sample.value]));
  return after.map((sample) => ({
    ...sample,
    value: sample.value - (previous.get(sampleKey(sample)) ?? 0),
  }));
}

export function sum(
  samples: Sample[],
  name: string,
  where: (labels: Record<string, string>) => boolean,
) {
  return samples
    .filter((sample) => sample.name === name && where(sample.labels))
    .reduce((total, sample) => total + sample.value, 0);
}

export async function scrape(url: string): Promise<Sample[]> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return parseMetrics(await response.text());
}
