s/^"tg_store_chunk(ch,&pf,transposed,k0,len,lid);/"/
s/tg_fetch_chunk(&pf,m,transposed,k0+TG_CHUNK,len,lid);//
