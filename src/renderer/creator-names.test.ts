import { describe, expect, it } from "vitest";
import { compositionTitle, fileName, folderName, folderNames } from "./creator-names";

describe("creator names", () => {
  it("names a folder by itself, telling apart two of the same name by their parents", () => {
    expect(folderName("/home/ana/Videos/Spring sale/")).toBe("Spring sale");
    expect(folderName("C:\\Users\\ana\\Videos\\promo")).toBe("promo");
    const names = folderNames(["/a/Clients/promo", "/a/Videos/promo", "/a/Videos/intro"]);
    expect([...names.values()]).toEqual(["promo (in Clients)", "promo (in Videos)", "intro"]);
  });

  it("titles the folder's index.html Main video and other compositions by their words", () => {
    expect(compositionTitle("index.html")).toBe("Main video");
    expect(compositionTitle("scenes/intro-card.html")).toBe("Intro card");
    expect(compositionTitle("scenes/index.html")).toBe("Index");
    expect(compositionTitle("outro_v2.html")).toBe("Outro v2");
  });

  it("names a picture by its file name", () => {
    expect(fileName("assets/photo-1.svg")).toBe("photo-1.svg");
  });
});
