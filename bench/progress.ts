// A progress bar on a terminal; a line every few seconds elsewhere (CI logs).
export class Progress {
  private readonly started = Date.now();
  private lastLine = 0;
  private done = 0;

  constructor(
    private readonly label: string,
    private readonly total: number,
  ) {
    this.draw();
  }

  update(done: number): void {
    this.done = done;
    this.draw();
  }

  finish(): void {
    this.done = this.total;
    this.draw(true);
    if (process.stderr.isTTY) process.stderr.write('\n');
  }

  private draw(force = false): void {
    const secs = ((Date.now() - this.started) / 1000).toFixed(1);
    const width = 30;
    const filled = this.total ? Math.round((this.done / this.total) * width) : width;
    const line = `${this.label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${this.done}/${this.total} ${secs}s`;
    if (process.stderr.isTTY) {
      process.stderr.write(`\r${line}`);
    } else if (force || Date.now() - this.lastLine > 5000) {
      this.lastLine = Date.now();
      process.stderr.write(`${line}\n`);
    }
  }
}
