/**
 * Receiver URLs often carry credentials in their path or query: logs, audit entries and
 * notifications name only a URL's origin (the attempt log, behind the admin API, keeps the full URL).
 */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid URL)';
  }
}
