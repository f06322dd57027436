import type { App } from '../../src/app.js';

/** One scrape of `app`: its text and the metric families it names (`# TYPE` lines). */
export async function scrapedFamilies(app: App): Promise<{ text: string; families: Set<string> }> {
  const text = await (await fetch(app.metricsUrl)).text();
  return { text, families: new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1]!)) };
}
