// What a user does to the calculator's page, for the browser tests and tools/web_timing.mjs: a click on the
// canvas and a file dropped on the window.

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Clicks the middle of `rect` ([x0, y0, x1, y1], canvas coordinates: an anchor of window.ftcost.ui()). ImGui
// 1.86 has no input queue: a press and release within one frame would be lost, so the pointer rests `settleMs`
// before the press, which is held `holdMs`.
export async function clickRect(page, rect, { settleMs = 100, holdMs = 100 } = {}) {
  const box = await page.locator("#canvas").boundingBox();
  await page.mouse.move(box.x + (rect[0] + rect[2]) / 2, box.y + (rect[1] + rect[3]) / 2);
  await sleep(settleMs);
  await page.mouse.down();
  await sleep(holdMs);
  await page.mouse.up();
}

// Drops a JSON file named `name` holding `text` on the page (dragenter, dragover, drop), as a user dragging it in.
export async function dropJsonFile(page, text, name) {
  await page.evaluate(([t, n]) => {
    const dt = new DataTransfer();
    dt.items.add(new File([t], n, { type: "application/json" }));
    for (const type of ["dragenter", "dragover", "drop"]) window.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, [text, name]);
}
