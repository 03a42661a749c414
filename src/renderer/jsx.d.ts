// <svc-player> in JSX (attributes as strings, as on any custom element).
import type { DetailedHTMLProps, HTMLAttributes, Ref } from "react";
import type { SvcPlayer } from "../player/index";

declare module "react" {
  namespace JSX {
    interface IntrinsicElements {
      "svc-player": Omit<DetailedHTMLProps<HTMLAttributes<SvcPlayer>, SvcPlayer>, "ref"> & {
        ref?: Ref<SvcPlayer>;
        class?: string;
        src?: string;
        width?: string;
        controls?: string;
        loop?: string;
        autoplay?: string;
        fps?: string;
        "library-base"?: string;
      };
    }
  }
}
