document.querySelectorAll('table.sortable').forEach(function(t){
var hs=t.querySelectorAll('th');hs.forEach(function(h,c){h.addEventListener('click',
function(){var asc=!h.classList.contains('sorted-asc');hs.forEach(function(x){
x.classList.remove('sorted-asc','sorted-desc')});h.classList.add(asc?'sorted-asc':'sorted-desc');
var b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows);rows.sort(function(x,y){
var p=x.cells[c],q=y.cells[c],a=p.dataset.v,d=q.dataset.v,r;
if(a!==undefined&&d!==undefined){a=a===''?-Infinity:+a;d=d===''?-Infinity:+d;r=a-d}
else{r=p.textContent.localeCompare(q.textContent)}return asc?r:-r});
rows.forEach(function(r){b.appendChild(r)})})})});
