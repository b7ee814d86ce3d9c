// Content-Disposition for a file the client should save: an ASCII fallback name and the exact UTF-8 one (RFC 6266).
export function attachment(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}
