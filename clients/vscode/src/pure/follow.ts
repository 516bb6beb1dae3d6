// Whether the transcript follows its end as it grows. Measuring "at the bottom" before a frame's
// changes lost the end whenever one frame added more than the slack: a chat shown again whole
// (its reply laid out at the browser's estimate for content not yet rendered, its real height a
// frame later) stayed at its top, and the lines it streamed after that were never laid out. So
// the choice is the user's: following until they scroll up, following again once they come back
// to the end. The webview's own scrolls (to the end, to a permission card) are told apart from
// theirs by the position they leave.

/** How close to the end (in CSS pixels) counts as at the end when the user scrolls. */
export const END_SLACK = 8;
/** After a card is scrolled into view: its item's margin and the transcript's padding lie below it. */
export const SHOWN_SLACK = 40;

/** A scroll box's measures: scrollTop, scrollHeight, clientHeight. */
export interface Box { top: number; height: number; client: number }

export class Follow {
  /** The transcript keeps its end in sight. */
  following = true;
  /** The last position seen, and the one the webview scrolled to itself (its scroll event is not the user's). */
  private last = 0;
  private mine: number | undefined;

  /** A scroll event's position is where the webview scrolled to itself (it is then taken as seen). */
  own(top: number): boolean {
    if (this.mine === undefined || Math.abs(top - this.mine) > 1) return false;
    this.mine = undefined;
    this.last = top;
    return true;
  }

  /** A scroll event: the user's, unless it lands where the webview scrolled to. */
  scrolled(b: Box) {
    const top = b.top;
    if (this.own(top)) return;
    const atEnd = b.height - top - b.client <= END_SLACK;
    // Up and away from the end: the user reads. Back at the end: follow again. A move down that
    // stops short (the browser keeping a block in place as one above it grows) changes nothing.
    if (atEnd) this.following = true;
    else if (top < this.last - 1) this.following = false;
    this.last = top;
  }

  /** The webview scrolled to `top` itself (after clamping: read back from the box). */
  scrolledTo(top: number) { this.mine = top; this.last = top; }

  /**
   * The webview scrolled something into view (a permission card) and the box stands at `b`:
   * its own scroll, and the transcript follows its end again only if that is in sight.
   */
  showed(b: Box) {
    this.scrolledTo(b.top);
    this.following = b.height - b.top - b.client <= SHOWN_SLACK;
  }

  /** Where the box should scroll to keep the end in sight, or undefined to leave it where it is. */
  target(b: Box): number | undefined {
    if (!this.following) return undefined;
    const end = Math.max(0, b.height - b.client);
    return Math.abs(b.top - end) <= 1 ? undefined : end;
  }

  /** Another chat shown, or the transcript reset: follow its end again. */
  reset() { this.following = true; this.mine = undefined; this.last = 0; }
}
