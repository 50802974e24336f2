/** Saves `body` as a file through the browser's download. */
export function download(name: string, type: string, body: string): void {
  const url = URL.createObjectURL(new Blob([body], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  // The download reads the URL after this call returns.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
