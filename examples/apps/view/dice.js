// The dice view's logic: shows the structured result of `roll_dice` (whether the model called
// the tool or the button did) and rolls again through the host with `callServerTool`.
import { App } from "@modelcontextprotocol/ext-apps";

const dice = document.getElementById("dice");
const total = document.getElementById("total");
const status = document.getElementById("status");
const button = document.getElementById("roll");
const count = document.getElementById("count");
const sides = document.getElementById("sides");

const app = new App({ name: "switchyard-dice-view", version: "1.0.0" });

// How many results were shown: a test (or a screen reader) can tell a new roll with the same
// total from the previous one.
let shown = 0;

function textOf(result) {
  return (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

function show(result) {
  const roll = result.structuredContent;
  if (result.isError || !roll || !Array.isArray(roll.rolls)) {
    status.textContent = textOf(result) || "The roll failed.";
    return;
  }
  dice.replaceChildren(
    ...roll.rolls.map((face) => {
      const die = document.createElement("span");
      die.className = "die";
      die.textContent = String(face);
      return die;
    }),
  );
  shown += 1;
  total.textContent = String(roll.total);
  total.dataset.rolls = String(shown);
  status.textContent = textOf(result);
}

// Set before connecting, so the result of the call that opened the view is not missed.
app.ontoolresult = (result) => show(result);

button.addEventListener("click", async () => {
  button.disabled = true;
  status.textContent = "Rolling…";
  try {
    const result = await app.callServerTool({
      name: "roll_dice",
      arguments: { count: Number(count.value), sides: Number(sides.value) },
    });
    show(result);
  } catch (error) {
    status.textContent = `The host refused the call: ${error?.message ?? error}`;
  } finally {
    button.disabled = false;
  }
});

app
  .connect()
  .then(() => {
    button.disabled = false;
    status.textContent = "Ready.";
  })
  .catch((error) => {
    status.textContent = `Could not connect to the host: ${error?.message ?? error}`;
  });
